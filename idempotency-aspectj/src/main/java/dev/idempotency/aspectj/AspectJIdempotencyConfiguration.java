package dev.idempotency.aspectj;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.spring.IdempotentAspectCustomizer;
import dev.idempotency.spring.KeyResolver;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;

/**
 * What {@code @EnableIdempotency(mode = AdviceMode.ASPECTJ)} imports (besides the executor and admin that both modes
 * share): the {@link WovenIdempotentAspect} instance as a bean, configured with the context's executor,
 * {@code KeyResolver} and {@link IdempotentAspectCustomizer}s. No proxy advisor is registered, so a method is guarded by
 * the woven advice only. When the context closes, the aspect forgets the executor.
 *
 * <p>Infrastructure: applications use {@code @EnableIdempotency(mode = AdviceMode.ASPECTJ)}, not this class.
 */
@Configuration(proxyBeanMethods = false)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
public class AspectJIdempotencyConfiguration {

    /** The woven aspect, configured. */
    @Bean(destroyMethod = "")
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    WovenIdempotentAspect wovenIdempotentAspect(IdempotentExecutor executor, ObjectProvider<KeyResolver> keyResolver,
            ObjectProvider<IdempotentAspectCustomizer> customizers) {
        WovenIdempotentAspect aspect = WovenIdempotentAspect.configure(executor,
                keyResolver.getIfUnique(KeyResolver::create));
        customizers.orderedStream().forEach(customizer -> customizer.customize(aspect));
        return aspect;
    }

    /**
     * Makes the aspect forget this context's executor when the context closes (its store is closed with it), unless
     * another context has configured it since.
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    WovenAspectRelease wovenIdempotentAspectRelease(WovenIdempotentAspect aspect, IdempotentExecutor executor) {
        return new WovenAspectRelease(aspect, executor);
    }

    /** Releases the executor from the aspect when the context that configured it closes. */
    record WovenAspectRelease(WovenIdempotentAspect aspect, IdempotentExecutor executor) implements DisposableBean {
        @Override
        public void destroy() {
            aspect.release(executor);
        }
    }
}
