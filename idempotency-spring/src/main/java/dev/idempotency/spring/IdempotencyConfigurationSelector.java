package dev.idempotency.spring;

import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.AdviceModeImportSelector;
import org.springframework.util.ClassUtils;

/**
 * Chooses what {@link EnableIdempotency} imports by its {@code mode}: the executor and admin always; then either the
 * proxy advice, or the configuration of {@code idempotency-aspectj}'s woven aspect, never both, so that no method is
 * guarded twice (as {@code @EnableTransactionManagement} chooses between its proxy interceptor and
 * {@code AnnotationTransactionAspect}).
 */
final class IdempotencyConfigurationSelector extends AdviceModeImportSelector<EnableIdempotency> {

    /** The configuration of the woven aspect, in {@code idempotency-aspectj}; named, as this module does not depend on it. */
    static final String ASPECTJ_CONFIGURATION = "dev.idempotency.aspectj.AspectJIdempotencyConfiguration";

    @Override
    protected String[] selectImports(AdviceMode adviceMode) {
        return switch (adviceMode) {
            case PROXY -> new String[] {IdempotencyConfiguration.class.getName(),
                    ProxyIdempotencyConfiguration.class.getName()};
            case ASPECTJ -> {
                if (!ClassUtils.isPresent(ASPECTJ_CONFIGURATION, getClass().getClassLoader())) {
                    throw new IllegalStateException("@EnableIdempotency(mode = AdviceMode.ASPECTJ) needs"
                            + " dev.idempotency:idempotency-aspectj on the class path, and the classes with"
                            + " @Idempotent methods woven with its aspect (docs/aspectj.md); or use the default mode,"
                            + " AdviceMode.PROXY");
                }
                yield new String[] {IdempotencyConfiguration.class.getName(), ASPECTJ_CONFIGURATION};
            }
        };
    }
}
