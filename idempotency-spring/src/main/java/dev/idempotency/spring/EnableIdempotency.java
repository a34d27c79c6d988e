package dev.idempotency.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;

/**
 * Turns on {@link dev.idempotency.Idempotent} for the beans of this application context. Put it on a
 * {@code @Configuration} class beside an {@link dev.idempotency.store.IdempotencyStore} bean:
 *
 * <pre>{@code
 * @Configuration
 * @EnableTransactionManagement
 * @EnableIdempotency
 * class AppConfig {
 *     @Bean
 *     IdempotencyStore idempotencyStore(DataSource dataSource) {
 *         return JdbcIdempotencyStore.builder(dataSource).build();
 *     }
 * }
 * }</pre>
 *
 * <p>It registers, unless the context already has them:
 * <ul>
 *   <li>an {@link dev.idempotency.IdempotentExecutor} bean built from the context's {@code IdempotencyStore} and,
 *       where present (one bean of the type), its {@code ResultCodec}, Jackson {@code JsonMapper},
 *       {@code IdempotencyScope}, {@code ConfirmationGate}, {@code IdempotencyObserver} and {@code java.time.Clock}, every
 *       {@code IdempotencyListener} bean, and {@link SpringTransactionBridge}. Declare your own
 *       {@code IdempotentExecutor} bean to replace it;</li>
 *   <li>an {@link dev.idempotency.IdempotencyAdmin} bean (named {@code idempotencyAdmin}) on the context's
 *       {@code IdempotencyStore} (its only one, or its {@code @Primary} one), with the codec and {@code Clock} the
 *       default executor takes: what an operator's endpoint injects to inspect, evict or resolve a key
 *       (docs/tiers.md). Declare your own {@code IdempotencyAdmin} bean to replace it; without a store bean (an
 *       executor bean of your own on a store that is no bean) none is registered;</li>
 *   <li>the {@link IdempotentAspect}, with the context's {@link KeyResolver} bean if there is one (that is how key
 *       expressions opt in to type, constructor or bean references), or the restricted default, and an advisor that
 *       applies it to methods annotated {@code @Idempotent}, or implementing or overriding a method that is;</li>
 *   <li>AspectJ-annotation auto-proxying ({@code @EnableAspectJAutoProxy}, interface proxies where a bean has
 *       interfaces, as Spring does by default).</li>
 * </ul>
 * The last two in the default {@link #mode()}, {@link AdviceMode#PROXY}. With {@link AdviceMode#ASPECTJ} it registers
 * no aspect bean of this module and no advisor: it configures the AspectJ aspect of {@code idempotency-aspectj}
 * (woven into the classes at compile or load time) with the executor, the {@code KeyResolver} and the
 * {@link IdempotentAspectCustomizer}s instead, so that self-invocations and non-public methods are guarded too; a
 * method is never guarded by both (docs/aspectj.md).
 *
 * <p>At startup it checks that every transaction advisor ({@code @EnableTransactionManagement}) runs outside the
 * aspect, and fails with a message saying which orders to change if one does not: the claim must be written in the
 * method's own transaction. It also fails the start, listing every problem, for {@code @Idempotent} methods a proxy
 * cannot reach (private, static, final, a bean not proxied), {@code @Transactional} ones with no transaction advice,
 * two methods with one operation name, a JDBC store whose table is missing, and two {@code IdempotencyScope} or
 * {@code ConfirmationGate} beans with none {@code @Primary}; it warns about self-invocations found in the byte code,
 * builds each method's descriptor before the first call, and logs one INFO line of what was wired
 * (docs/spring.md, "Startup checks").
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@Import(IdempotencyConfigurationSelector.class)
public @interface EnableIdempotency {

    /**
     * The order of {@link IdempotentAspect} among other advice; a lower value runs further outside. Must not be lower
     * than the transaction advisor's order ({@code @EnableTransactionManagement(order = ...)}, by default also
     * {@link Ordered#LOWEST_PRECEDENCE}).
     */
    int order() default Ordered.LOWEST_PRECEDENCE;

    /**
     * How the advice is applied: {@link AdviceMode#PROXY} (the default), by Spring AOP proxies, which calls from
     * within the same object ({@code this.createOrder(...)}) and non-public methods do not pass; or
     * {@link AdviceMode#ASPECTJ}, by the aspect of {@code idempotency-aspectj} woven into the classes, which guards
     * every execution of an {@code @Idempotent} method, however it is called. {@link #order()} applies to the proxy
     * only: the woven aspect runs inside Spring's woven or proxied transaction advice on the same method.
     */
    AdviceMode mode() default AdviceMode.PROXY;
}
