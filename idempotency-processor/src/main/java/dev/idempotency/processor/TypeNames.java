package dev.idempotency.processor;

import java.util.List;
import javax.lang.model.element.ExecutableElement;
import javax.lang.model.element.TypeElement;
import javax.lang.model.element.VariableElement;
import javax.lang.model.type.ArrayType;
import javax.lang.model.type.DeclaredType;
import javax.lang.model.type.TypeKind;
import javax.lang.model.type.TypeMirror;
import javax.lang.model.type.WildcardType;
import javax.lang.model.util.Elements;
import javax.lang.model.util.Types;

/** Renders types the way reflection names them (for the inventory) or briefly (for messages). */
final class TypeNames {

    private TypeNames() {
    }

    /** The erasure of {@code type} as {@link Class#getTypeName()} writes it: {@code java.util.Map}, {@code a.B$C[]}. */
    static String erased(TypeMirror type, Types types, Elements elements) {
        TypeMirror erased = types.erasure(type);
        if (erased instanceof ArrayType array) {
            return erased(array.getComponentType(), types, elements) + "[]";
        }
        if (erased instanceof DeclaredType declared) {
            return elements.getBinaryName((TypeElement) declared.asElement()).toString();
        }
        return erased.toString();
    }

    /** The generic type with binary class names: {@code java.util.List<com.example.Order>}. */
    static String generic(TypeMirror type, Elements elements) {
        if (type instanceof ArrayType array) {
            return generic(array.getComponentType(), elements) + "[]";
        }
        if (type instanceof WildcardType wildcard) {
            if (wildcard.getExtendsBound() != null) {
                return "? extends " + generic(wildcard.getExtendsBound(), elements);
            }
            return wildcard.getSuperBound() != null ? "? super " + generic(wildcard.getSuperBound(), elements) : "?";
        }
        if (type instanceof DeclaredType declared && type.getKind() == TypeKind.DECLARED) {
            StringBuilder sb = new StringBuilder(elements.getBinaryName((TypeElement) declared.asElement()));
            List<? extends TypeMirror> arguments = declared.getTypeArguments();
            if (!arguments.isEmpty()) {
                sb.append('<');
                for (int i = 0; i < arguments.size(); i++) {
                    sb.append(i == 0 ? "" : ", ").append(generic(arguments.get(i), elements));
                }
                sb.append('>');
            }
            return sb.toString();
        }
        return type.toString();
    }

    /** A short form for messages: simple class names, type arguments kept. */
    static String simple(TypeMirror type) {
        if (type instanceof ArrayType array) {
            return simple(array.getComponentType()) + "[]";
        }
        if (type instanceof DeclaredType declared && type.getKind() == TypeKind.DECLARED) {
            StringBuilder sb = new StringBuilder(declared.asElement().getSimpleName());
            List<? extends TypeMirror> arguments = declared.getTypeArguments();
            if (!arguments.isEmpty()) {
                sb.append('<');
                for (int i = 0; i < arguments.size(); i++) {
                    sb.append(i == 0 ? "" : ", ").append(simple(arguments.get(i)));
                }
                sb.append('>');
            }
            return sb.toString();
        }
        return type.toString();
    }

    /** The parameters of {@code method} for a message: {@code String approvalNo, OrderRequest request}. */
    static String parameterList(ExecutableElement method) {
        StringBuilder sb = new StringBuilder();
        for (VariableElement p : method.getParameters()) {
            sb.append(sb.length() == 0 ? "" : ", ").append(simple(p.asType())).append(' ').append(p.getSimpleName());
        }
        return sb.toString();
    }
}
