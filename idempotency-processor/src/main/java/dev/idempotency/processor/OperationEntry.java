package dev.idempotency.processor;

import java.util.List;
import javax.lang.model.element.ExecutableElement;
import org.jspecify.annotations.Nullable;

/**
 * One idempotent operation as written to {@code operations.json}.
 *
 * @param operation      the operation name (the scope of its keys)
 * @param className      the binary name of the declaring class
 * @param method         the method name
 * @param parameterTypes the erased parameter types, as {@link Class#getTypeName()} writes them
 * @param returnType     the declared (generic) return type
 * @param tier           the tier's name
 * @param key            the key expression, as written
 * @param ttl            the ttl, as written
 * @param compensate     the compensation method's name, or null
 * @param lockTimeout    the lock timeout, as written
 * @param onStoreDown    the {@code StoreDown} name: what a call does when the store is unavailable
 * @param element        the method, for messages
 */
record OperationEntry(
        String operation,
        String className,
        String method,
        List<String> parameterTypes,
        String returnType,
        String tier,
        String key,
        String ttl,
        @Nullable String compensate,
        String lockTimeout,
        String onStoreDown,
        ExecutableElement element) {

    /** How messages name the method: {@code OrderService.createOrder(String, OrderRequest)}. */
    String display() {
        return className.substring(className.lastIndexOf('.') + 1) + "." + method + "("
                + TypeNames.parameterList(element) + ")";
    }
}
