package dev.idempotency.internal;

/**
 * Why a Spring proxy never applies {@code @Idempotent} to a method, in one wording shared by the annotation processor
 * (compile time) and the Spring startup check (run time), so that a user meets the same sentence whichever finds it
 * first. Internal. {@code where} is {@code Type.method}; {@code fix} is appended as is (the processor points to its
 * weaving option, the startup check to AspectJ weaving).
 */
public final class ProxyReach {

    private ProxyReach() {
    }

    public static String privateMethod(String where, String fix) {
        return "@Idempotent on " + where + " is never applied: a Spring proxy cannot intercept a private method;"
                + " make it public and call it through the bean" + fix;
    }

    public static String staticMethod(String where, String fix) {
        return "@Idempotent on " + where + " is never applied: a Spring proxy cannot intercept a static method;"
                + " make it an instance method of a bean" + fix;
    }

    public static String finalMethod(String where, String fix) {
        return "@Idempotent on " + where + " is never applied: a Spring proxy cannot override a final method;"
                + " remove final" + fix;
    }

    /** {@code kind} is empty, {@code " (a record)"} or {@code " (an enum)"}. */
    public static String finalClass(String where, String simpleName, String kind, String fix) {
        return "@Idempotent on " + where + " is never applied: class " + simpleName + " is final" + kind
                + " and a Spring proxy must subclass it; make it a non-final class" + fix;
    }
}
