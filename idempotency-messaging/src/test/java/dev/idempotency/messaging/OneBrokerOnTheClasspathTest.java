package dev.idempotency.messaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.store.InMemoryIdempotencyStore;
import java.lang.reflect.Method;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;

/**
 * {@code spring-rabbit} and {@code spring-kafka} are optional: an application has one of them. The module's classes
 * are loaded here by a class loader that cannot see the other broker's client, and the advice of the broker that is
 * there is built, introspected as Spring introspects a bean, and checked at startup.
 */
class OneBrokerOnTheClasspathTest {

    @ParameterizedTest
    @CsvSource({
        "kafka, org.springframework.amqp., com.rabbitmq.",
        "rabbit, org.springframework.kafka., org.apache.kafka."})
    void theAdviceOfTheBrokerThereWorksWithoutTheOther(String broker, String hidden1, String hidden2)
            throws Exception {
        ClassLoader loader = new Without(List.of(hidden1, hidden2), getClass().getClassLoader());
        assertThatThrownBy(() -> loader.loadClass(hidden1 + "Missing")).isInstanceOf(ClassNotFoundException.class);
        Class<?> adviceClass = loader.loadClass(IdempotentListenerAdvice.class.getName());
        assertThat(adviceClass).isNotSameAs(IdempotentListenerAdvice.class);
        // what Spring does with a bean's class
        assertThat(adviceClass.getDeclaredMethods()).isNotEmpty();

        IdempotentExecutor executor = IdempotentExecutor.builder(new InMemoryIdempotencyStore()).build();
        Object builder = adviceClass.getMethod(broker, IdempotentExecutor.class, String.class)
                .invoke(null, executor, "orders");
        builder.getClass().getMethod("key", String.class).invoke(builder,
                broker.equals("kafka") ? "#headers['id']" : "#messageId");
        Object advice = builder.getClass().getMethod("build").invoke(builder);
        adviceClass.getMethod("setBeanFactory", org.springframework.beans.factory.BeanFactory.class)
                .invoke(advice, new DefaultListableBeanFactory());
        adviceClass.getMethod("afterSingletonsInstantiated").invoke(advice);
        Method toString = adviceClass.getMethod("toString");
        assertThat(toString.invoke(advice)).asString().contains("orders");
    }

    /** Loads this module's classes itself, and refuses the hidden packages. */
    private static final class Without extends ClassLoader {
        private final List<String> hidden;

        Without(List<String> hidden, ClassLoader parent) {
            super(parent);
            this.hidden = hidden;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            synchronized (getClassLoadingLock(name)) {
                if (hidden.stream().anyMatch(name::startsWith)) {
                    throw new ClassNotFoundException(name + " is hidden");
                }
                if (!name.startsWith("dev.idempotency.messaging.")) {
                    return super.loadClass(name, resolve);
                }
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    String resource = name.replace('.', '/') + ".class";
                    try (var in = getParent().getResourceAsStream(resource)) {
                        if (in == null) {
                            throw new ClassNotFoundException(name);
                        }
                        byte[] bytes = in.readAllBytes();
                        c = defineClass(name, bytes, 0, bytes.length);
                    } catch (java.io.IOException e) {
                        throw new ClassNotFoundException(name, e);
                    }
                }
                if (resolve) {
                    resolveClass(c);
                }
                return c;
            }
        }
    }
}
