package dev.idempotency.spring;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.asm.ClassReader;
import org.springframework.asm.ClassVisitor;
import org.springframework.asm.Handle;
import org.springframework.asm.MethodVisitor;
import org.springframework.asm.Opcodes;
import org.springframework.asm.SpringAsmInfo;
import org.springframework.asm.Type;
import org.springframework.util.ClassUtils;

/**
 * Finds, in the byte code of a bean's class and its superclasses, instance methods that call one of the class's own
 * {@code @Idempotent} methods (directly, or through a method reference such as {@code this::createOrder}), and logs each
 * as a warning with the fix: such a call goes through {@code this}, not through the proxy, so it runs unguarded.
 *
 * <p>What it cannot see: a call on another instance of the same class is reported too (the receiver is not traced);
 * calls made through reflection, through a helper object that holds {@code this}, or from another class (an inner
 * class, a lambda compiled elsewhere) are not found. Classes whose byte code cannot be read are skipped.
 */
final class SelfInvocations {

    private static final Log LOG = LogFactory.getLog(SelfInvocations.class);

    private SelfInvocations() {
    }

    /** Logs a warning for each method of {@code type}'s hierarchy that calls one of {@code idempotent} on itself. */
    static void warn(Class<?> type, List<Method> idempotent) {
        for (String found : find(type, idempotent)) {
            LOG.warn(found);
        }
    }

    /** One sentence per caller and callee. */
    static Set<String> find(Class<?> type, List<Method> idempotent) {
        Map<String, Method> targets = new HashMap<>();
        for (Method m : idempotent) {
            targets.put(m.getName() + Type.getMethodDescriptor(m), m);
        }
        Set<String> owners = new LinkedHashSet<>();
        List<Class<?>> classes = new ArrayList<>();
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            classes.add(c);
            owners.add(Type.getInternalName(c));
        }
        for (Class<?> i : ClassUtils.getAllInterfacesForClassAsSet(type)) {
            owners.add(Type.getInternalName(i));
        }
        Set<String> found = new LinkedHashSet<>();
        for (Class<?> c : classes) {
            if (c.getName().startsWith("java.")) {
                break;
            }
            byte[] code = code(c);
            if (code != null) {
                new ClassReader(code).accept(new Scanner(c, owners, targets, found), ClassReader.SKIP_DEBUG
                        | ClassReader.SKIP_FRAMES);
            }
        }
        return found;
    }

    private static byte @Nullable [] code(Class<?> c) {
        ClassLoader loader = c.getClassLoader() != null ? c.getClassLoader() : ClassLoader.getSystemClassLoader();
        try (InputStream in = loader.getResourceAsStream(c.getName().replace('.', '/') + ".class")) {
            return in == null ? null : in.readAllBytes();
        } catch (IOException e) {
            return null;
        }
    }

    private static final class Scanner extends ClassVisitor {

        private final Class<?> type;
        private final Set<String> owners;
        private final Map<String, Method> targets;
        private final Set<String> found;

        Scanner(Class<?> type, Set<String> owners, Map<String, Method> targets, Set<String> found) {
            super(SpringAsmInfo.ASM_VERSION);
            this.type = type;
            this.owners = owners;
            this.targets = targets;
            this.found = found;
        }

        @Override
        public @Nullable MethodVisitor visitMethod(int access, String name, String descriptor,
                @Nullable String signature, String @Nullable [] exceptions) {
            if ((access & Opcodes.ACC_STATIC) != 0 || (access & Opcodes.ACC_ABSTRACT) != 0) {
                return null; // a static method has no this to call through; an abstract one no code
            }
            String caller = name + descriptor;
            return new MethodVisitor(SpringAsmInfo.ASM_VERSION) {
                @Override
                public void visitMethodInsn(int opcode, String owner, String callee, String calleeDescriptor,
                        boolean isInterface) {
                    if (opcode == Opcodes.INVOKESTATIC || !owners.contains(owner)) {
                        return;
                    }
                    // super.createOrder(...) inside an overriding createOrder runs under the advice of the outer call
                    if (opcode == Opcodes.INVOKESPECIAL && caller.equals(callee + calleeDescriptor)) {
                        return;
                    }
                    report(name, descriptor, callee + calleeDescriptor);
                }

                @Override
                public void visitInvokeDynamicInsn(String indyName, String indyDescriptor, Handle bootstrap,
                        Object... arguments) {
                    for (Object argument : arguments) {
                        if (argument instanceof Handle h && owners.contains(h.getOwner())
                                && h.getTag() != Opcodes.H_INVOKESTATIC) {
                            report(name, descriptor, h.getName() + h.getDesc());
                        }
                    }
                }
            };
        }

        private void report(String callerName, String callerDescriptor, String callee) {
            Method target = targets.get(callee);
            if (target == null || callerName.equals("<clinit>")) {
                return;
            }
            String from = callerName.startsWith("lambda$") ? "a lambda in " + type.getSimpleName()
                    : type.getSimpleName() + "." + (callerName.equals("<init>") ? "<init>" : callerName)
                            + Arrays.stream(Type.getArgumentTypes(callerDescriptor)).map(SelfInvocations::simple)
                                    .collect(Collectors.joining(", ", "(", ")"));
            found.add(from + " calls @Idempotent " + IdempotentAspect.signature(target) + " on its own bean: a call"
                    + " through 'this' does not pass the proxy, so it runs unguarded (no key is claimed, nothing is"
                    + " replayed). Call it through the bean instead (inject it, e.g. @Lazy @Autowired "
                    + target.getDeclaringClass().getSimpleName() + " self, or move the method to another bean), or"
                    + " weave the class with AspectJ");
        }
    }

    private static String simple(Type t) {
        String name = t.getClassName();
        return name.substring(name.lastIndexOf('.') + 1);
    }
}
