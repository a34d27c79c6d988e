package dev.idempotency.spring.boot;

import dev.idempotency.ConfirmationGate;
import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.IdempotencyObserver;
import dev.idempotency.IdempotencyScope;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotencyReport;
import dev.idempotency.cache.CaffeinePrefilter;
import dev.idempotency.store.CircuitBreakerStore;
import dev.idempotency.codec.JacksonResultCodec;
import dev.idempotency.codec.ResultCodec;
import dev.idempotency.jdbc.JdbcIdempotencyAudit;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.metrics.MicrometerIdempotencyListener;
import dev.idempotency.metrics.MicrometerIdempotencyObserver;
import dev.idempotency.spring.EnableIdempotency;
import dev.idempotency.spring.IdempotentAdvisorRegistrar;
import dev.idempotency.spring.IdempotentAspect;
import dev.idempotency.spring.IdempotentAspectCustomizer;
import dev.idempotency.spring.IdempotentAspectSupport;
import dev.idempotency.spring.SpringTransactionBridge;
import dev.idempotency.store.IdempotencyAudit;
import dev.idempotency.store.IdempotencyStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.time.Clock;
import javax.sql.DataSource;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistryPostProcessor;
import org.springframework.context.annotation.Role;
import org.springframework.core.Ordered;
import org.springframework.core.io.ResourceLoader;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionOperations;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.util.ClassUtils;
import tools.jackson.databind.json.JsonMapper;

/**
 * Spring Boot auto-configuration of {@code @Idempotent}: one dependency and a few {@code idempotency.*} properties
 * ({@link IdempotencyProperties}). It registers, each only when the application has no bean of that type (the
 * store's schema initializer only with the store it registers):
 * <ul>
 *   <li>a {@link JdbcIdempotencyStore} on the application's {@code DataSource} (when there is exactly one, and
 *       {@code idempotency-jdbc-store} is on the class path), with a database initializer that creates its table
 *       ({@code idempotency.jdbc.initialize-schema});</li>
 *   <li>a {@link ResultCodec}: Jackson on the application's {@code JsonMapper} when there is one;</li>
 *   <li>the {@link IdempotentExecutor} and an {@link IdempotencyAdmin} on the same store, in front of which the
 *       {@link CaffeinePrefilter} answers replays of outcomes committed on this node ({@code idempotency.prefilter.*});
 *       the executor with every {@link IdempotencyListener} bean, and the {@link IdempotencyScope}, {@link ConfirmationGate}, {@link IdempotencyObserver} and
 *       {@link Clock} beans when there is one of each;</li>
 *   <li>a {@link MicrometerIdempotencyListener} when there is a {@code MeterRegistry}, and a
 *       {@link MicrometerIdempotencyObserver} when there is an {@code ObservationRegistry};</li>
 *   <li>the {@link IdempotentAspect}, as {@link EnableIdempotency} does, with {@code idempotency.default-ttl} and
 *       {@code idempotency.default-lock-timeout} applied.</li>
 * </ul>
 * and, always, an {@link IdempotentAspectCustomizer} that applies those two properties; it runs before the
 * application's own customizers, so that these can override them.
 * {@link IdempotencyPurgeAutoConfiguration} schedules the purge of expired records. {@code idempotency.enabled=false}
 * turns all of it off.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
        "org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration",
        "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration",
        "org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration",
        "org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration" })
@ConditionalOnBooleanProperty(name = "idempotency.enabled", matchIfMissing = true)
@EnableConfigurationProperties(IdempotencyProperties.class)
public final class IdempotencyAutoConfiguration {

    private static final String CAFFEINE = "com.github.benmanes.caffeine.cache.Caffeine";
    private static final Log LOG = LogFactory.getLog(IdempotencyAutoConfiguration.class);

    @Bean
    @ConditionalOnMissingBean
    ResultCodec idempotencyResultCodec(ObjectProvider<JsonMapper> jsonMapper) {
        return JacksonResultCodec.using(jsonMapper.getIfUnique(JacksonResultCodec::defaultMapper));
    }

    /**
     * The store the executor and the admin share: the application's one store, behind the pre-filter unless that is
     * off, so that an eviction through the admin also leaves this node's pre-filter.
     */
    @Bean
    @ConditionalOnSingleCandidate(IdempotencyStore.class)
    IdempotencyStoreFront idempotencyStoreFront(IdempotencyStore store, ObjectProvider<Clock> clock,
            IdempotencyProperties properties, ResourceLoader resourceLoader,
            ObjectProvider<CircuitBreakerStore.Listener> circuitListeners, ObjectProvider<StoreLayer> shared) {
        IdempotencyStore guarded = circuitBreaker(store, properties, circuitListeners);
        StoreLayer layer = shared.getIfAvailable();
        IdempotencyStore sharing = layer == null || store instanceof CaffeinePrefilter ? guarded : layer.wrap(guarded);
        IdempotencyStore front = prefilter(sharing, properties, clock.getIfUnique(Clock::systemUTC),
                resourceLoader.getClassLoader());
        IdempotencyProperties.Prefilter settings = properties.getPrefilter();
        String description = (front == sharing
                ? (store instanceof CaffeinePrefilter ? " (the application's own pre-filter)" : ", no pre-filter")
                : " behind the pre-filter (maximum-size " + settings.getMaximumSize() + ", maximum-age "
                        + settings.getMaximumAge() + ")")
                + (guarded == store ? "" : ", circuit breaker (failure-threshold "
                        + properties.getCircuitBreaker().getFailureThreshold() + ", open-for "
                        + properties.getCircuitBreaker().getOpenFor() + ")")
                + (sharing == guarded ? "" : ", " + layer);
        return new IdempotencyStoreFront(front, store, description);
    }

    /**
     * The store inside its circuit breaker, which goes under the pre-filter so that cached outcomes keep replaying
     * while it is open; unless it is off, the application wraps its store itself, or its store is already a
     * pre-filter (nothing can go under it from here).
     */
    static IdempotencyStore circuitBreaker(IdempotencyStore store, IdempotencyProperties properties,
            ObjectProvider<CircuitBreakerStore.Listener> listeners) {
        IdempotencyProperties.CircuitBreaker settings = properties.getCircuitBreaker();
        if (!settings.isEnabled() || store instanceof CircuitBreakerStore || store instanceof CaffeinePrefilter) {
            return store;
        }
        CircuitBreakerStore.Builder builder = CircuitBreakerStore.wrap(store)
                .failureThreshold(settings.getFailureThreshold())
                .openFor(settings.getOpenFor());
        listeners.orderedStream().forEach(builder::listener);
        return builder.build();
    }

    @Bean
    @ConditionalOnMissingBean
    IdempotentExecutor idempotentExecutor(ObjectProvider<IdempotencyStoreFront> front,
            ObjectProvider<IdempotencyStore> stores, ResultCodec codec, ObjectProvider<JsonMapper> jsonMapper,
            ObjectProvider<IdempotencyScope> scope, ObjectProvider<ConfirmationGate> gate,
            ObjectProvider<IdempotencyListener> listeners, ObjectProvider<IdempotencyObserver> observer,
            ObjectProvider<IdempotencyAudit> audit, ObjectProvider<Clock> clock, ListableBeanFactory beans,
            IdempotencyProperties properties) {
        IdempotencyStoreFront theFront = front.getIfAvailable();
        if (theFront == null) {
            throw new MissingIdempotencyStoreException(stores.stream().findAny().isPresent());
        }
        IdempotentExecutor.Builder builder = IdempotentExecutor.builder(theFront.store())
                .codec(codec)
                .clock(clock.getIfUnique(Clock::systemUTC))
                .transactions(SpringTransactionBridge.INSTANCE)
                .maxWaitersPerKey(properties.getMaxWaitersPerKey());
        jsonMapper.ifUnique(builder::jsonMapper);
        IdempotencyScope theScope = single(scope, IdempotencyScope.class, beans, "one tenant's key could replay"
                + " another tenant's result");
        if (theScope != null) {
            builder.scope(theScope);
        } else {
            LOG.info("Idempotency: no IdempotencyScope bean, so a key means the same for every caller. Where clients"
                    + " choose keys (an Idempotency-Key header, an AI agent's tool call), declare one that returns the"
                    + " tenant or principal, so that one caller's key can never replay another's result"
                    + " (docs/spring-boot.md)");
        }
        ConfirmationGate theGate = single(gate, ConfirmationGate.class, beans, "an IRREVERSIBLE call would run"
                + " unconfirmed");
        if (theGate != null) {
            builder.confirmationGate(theGate);
        }
        observer.ifUnique(builder::observer);
        // the attempts that meet a key in trouble go where the admin writes its resolutions, for the console
        audit.ifUnique(builder::attempts);
        listeners.orderedStream().forEach(builder::listener);
        return builder.build();
    }

    /**
     * The one bean of {@code type}, or its {@code @Primary} one; null when there is none. Several and none primary
     * fail the application, naming them: where the bean guards isolation or confirmation, silently using none of
     * them is the worst choice.
     */
    private static <T> @Nullable T single(ObjectProvider<T> provider, Class<T> type, ListableBeanFactory beans,
            String risk) {
        T found = provider.getIfUnique();
        if (found == null) {
            String[] names = beans.getBeanNamesForType(type, true, false);
            if (names.length > 1) {
                throw new IllegalStateException("found " + names.length + " " + type.getSimpleName() + " beans ("
                        + String.join(", ", names) + ") and none is @Primary: the executor would run with none of"
                        + " them, and " + risk + ". Mark the one to use @Primary, or declare an IdempotentExecutor"
                        + " bean of your own");
            }
        }
        return found;
    }

    /** For operators: inspects, evicts and resolves keys through the executor's store and pre-filter. */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnSingleCandidate(IdempotencyStore.class)
    IdempotencyAdmin idempotencyAdmin(IdempotencyStoreFront front, ResultCodec codec, ObjectProvider<Clock> clock,
            ResourceLoader resourceLoader, ObjectProvider<IdempotencyAudit> audit) {
        IdempotencyAdmin.Builder builder = IdempotencyAdmin.builder(front.store()).codec(codec)
                .clock(clock.getIfUnique(Clock::systemUTC));
        IdempotencyAudit theAudit = audit.getIfUnique();
        if (theAudit != null) {
            builder.audit(theAudit);
        } else {
            LOG.info("Resolutions by hand are audited in memory only (this node, until it stops): declare an"
                    + " IdempotencyAudit bean, e.g. JdbcIdempotencyAudit.of(store), to keep them");
        }
        ClassLoader classLoader = resourceLoader.getClassLoader();
        if (classLoader != null) {
            builder.classLoader(classLoader);
        }
        return builder.build();
    }

    /**
     * The store in front of which the executor and the admin work. Its {@code toString} is what the startup line
     * says of the store ({@code IdempotencyStartupCheck} reads this bean by its name, idempotencyStoreFront).
     */
    record IdempotencyStoreFront(IdempotencyStore store, IdempotencyStore behind, String prefilter) {

        IdempotencyStoreFront(IdempotencyStore store) {
            this(store, store, "");
        }

        @Override
        public String toString() {
            return behind + prefilter; // at the time of asking: a JDBC store names its dialect once it knows it
        }
    }

    /**
     * A store decorator that goes between the circuit breaker and the local pre-filter: the Redis pre-filter
     * ({@link RedisConfiguration}). Its {@code toString} is what the startup line says of it.
     */
    interface StoreLayer {
        IdempotencyStore wrap(IdempotencyStore store);
    }

    /** The store the executor uses: behind the pre-filter unless it is off (see idempotency.prefilter.enabled). */
    static IdempotencyStore prefilter(IdempotencyStore store, IdempotencyProperties properties, Clock clock,
            @Nullable ClassLoader classLoader) {
        IdempotencyProperties.Prefilter settings = properties.getPrefilter();
        if (Boolean.FALSE.equals(settings.getEnabled())) {
            return store;
        }
        if (!ClassUtils.isPresent(CAFFEINE, classLoader)) {
            if (Boolean.TRUE.equals(settings.getEnabled())) {
                throw new IllegalStateException("idempotency.prefilter.enabled=true needs Caffeine on the class path "
                        + "(com.github.ben-manes.caffeine:caffeine)");
            }
            return store;
        }
        if (store instanceof CaffeinePrefilter) {
            return store; // the application put one in front of its store itself
        }
        return CaffeinePrefilter.wrap(store)
                .maximumSize(settings.getMaximumSize())
                .maximumBytes(settings.getMaxBytes().toBytes())
                .maximumAge(settings.getMaximumAge())
                .transactions(SpringTransactionBridge.INSTANCE)
                .clock(clock)
                .build();
    }

    /**
     * Applies the default ttl and lock timeout properties to the aspect, first of all customizers, so that an
     * application's own {@link IdempotentAspectCustomizer} has the last word.
     */
    @Bean
    IdempotentAspectCustomizer idempotencyPropertiesAspectCustomizer(IdempotencyProperties properties) {
        return new PropertiesAspectCustomizer(properties);
    }

    /** The properties, applied before every other customizer (see {@link Ordered#HIGHEST_PRECEDENCE}). */
    private record PropertiesAspectCustomizer(IdempotencyProperties properties)
            implements IdempotentAspectCustomizer, Ordered {

        @Override
        public void customize(IdempotentAspectSupport aspect) {
            aspect.setDefaultTtl(properties.getDefaultTtl());
            aspect.setDefaultLockTimeout(properties.getDefaultLockTimeout());
        }

        @Override
        public int getOrder() {
            return Ordered.HIGHEST_PRECEDENCE;
        }
    }

    /** Applies an {@link IdempotentAspect} bean the application declares itself, as it applies its own. */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static BeanDefinitionRegistryPostProcessor idempotencyAspectAdvisorRegistrar() {
        return new IdempotentAdvisorRegistrar();
    }

    /**
     * The aspect, as {@code @EnableIdempotency} registers it, unless the application registered it already (a proxy
     * aspect, or the woven one of {@code @EnableIdempotency(mode = ASPECTJ)}).
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingBean(IdempotentAspectSupport.class)
    @EnableIdempotency
    static class AspectConfiguration {
    }

    /** The JDBC store and its table, unless the application has a store of its own. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({ JdbcIdempotencyStore.class, DataSource.class })
    @ConditionalOnSingleCandidate(DataSource.class)
    @ConditionalOnMissingBean(IdempotencyStore.class)
    static class JdbcStoreConfiguration {

        @Bean
        @DependsOnDatabaseInitialization
        JdbcIdempotencyStore idempotencyStore(DataSource dataSource, IdempotencyProperties properties) {
            return JdbcIdempotencyStore.builder(dataSource).tableName(properties.getJdbc().getTableName()).build();
        }

        /** Resolutions by hand, in the table beside the store's, written in the resolution's transaction. */
        @Bean
        @ConditionalOnMissingBean(IdempotencyAudit.class)
        JdbcIdempotencyAudit idempotencyAudit(JdbcIdempotencyStore idempotencyStore) {
            return JdbcIdempotencyAudit.of(idempotencyStore);
        }

        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(name = "org.springframework.boot.jdbc.init.DataSourceScriptDatabaseInitializer")
        static class SchemaInitializationConfiguration {

            @Bean
            IdempotencySchemaInitializer idempotencySchemaInitializer(DataSource dataSource,
                    IdempotencyProperties properties) {
                // describes the table of the store above; not that bean itself, which starts after initializers
                JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(dataSource)
                        .tableName(properties.getJdbc().getTableName()).build();
                return new IdempotencySchemaInitializer(dataSource, store, properties.getJdbc().getInitializeSchema());
            }
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    @ConditionalOnBean(MeterRegistry.class)
    static class MetricsConfiguration {

        @Bean
        @ConditionalOnMissingBean
        MicrometerIdempotencyListener micrometerIdempotencyListener(MeterRegistry registry) {
            return new MicrometerIdempotencyListener(registry);
        }

        /** The purge scheduler's runs, as the purge meters ({@code idempotency.purge.*}). */
        @Bean
        IdempotencyPurgeScheduler.Observer idempotencyPurgeMeters(ObjectProvider<MicrometerIdempotencyListener> meters) {
            return (deleted, at, failure) -> meters.ifAvailable(m -> m.purged(deleted, at, failure));
        }
    }

    /** Counts each outcome per operation for the idempotency report; the executor hears it as a listener. */
    @Bean
    @ConditionalOnMissingBean
    IdempotencyReport.Counts idempotencyReportCounts() {
        return new IdempotencyReport.Counts();
    }

    /**
     * The Redis pre-filter, between the circuit breaker and the local pre-filter, when idempotency-redis and Lettuce
     * are on the class path and {@code idempotency.redis.enabled=true}. Closed with the context.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = { "dev.idempotency.redis.RedisPrefilter", "io.lettuce.core.RedisClient" })
    @ConditionalOnBooleanProperty(name = "idempotency.redis.enabled")
    static class RedisConfiguration {

        @Bean
        StoreLayer idempotencyRedisPrefilter(IdempotencyProperties properties, ObjectProvider<Clock> clock,
                org.springframework.core.env.Environment environment) {
            IdempotencyProperties.Redis redis = properties.getRedis();
            String url = redis.getUrl() != null ? redis.getUrl()
                    : environment.getProperty("spring.data.redis.url", "redis://localhost:6379");
            return new RedisStoreLayer(url, redis, clock.getIfUnique(Clock::systemUTC));
        }

        /** Its counters ({@code idempotency.prefilter.redis.*}), bound by Boot to the application's registry. */
        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(name = "io.micrometer.core.instrument.binder.MeterBinder")
        static class RedisMetricsConfiguration {

            @Bean
            io.micrometer.core.instrument.binder.MeterBinder idempotencyRedisPrefilterMeters(StoreLayer layer) {
                return new RedisPrefilterMeters((RedisStoreLayer) layer);
            }
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
    @EnableConfigurationProperties(IdempotencyEndpointProperties.class)
    static class ReportEndpointConfiguration {

        @Bean
        @ConditionalOnMissingBean
        IdempotencyReportEndpoint idempotencyReportEndpoint(ObjectProvider<IdempotencyAdmin> admin,
                IdempotencyReport.Counts counts, ObjectProvider<ConfirmationGate> gate, ObjectProvider<Clock> clock,
                ObjectProvider<JsonMapper> jsonMapper, IdempotencyEndpointProperties properties,
                ObjectProvider<PlatformTransactionManager> transactionManager) {
            PlatformTransactionManager tm = transactionManager.getIfUnique();
            IdempotencyReportEndpoint.Guard guard = new IdempotencyReportEndpoint.Guard(properties.getShowKeys(),
                    properties.getRoles(), tm != null ? new TransactionTemplate(tm)
                            : TransactionOperations.withoutTransaction());
            // resolved when asked: the admin exists once the application has its one store
            return new IdempotencyReportEndpoint(() -> {
                IdempotencyAdmin theAdmin = admin.getIfAvailable();
                return theAdmin == null ? java.util.List.of() : theAdmin.operations();
            }, counts, () -> gate.getIfAvailable() != null, admin::getIfAvailable,
                    clock.getIfUnique(Clock::systemUTC), jsonMapper.getIfUnique(JacksonResultCodec::defaultMapper), guard);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(ObservationRegistry.class)
    @ConditionalOnBean(ObservationRegistry.class)
    static class ObservationConfiguration {

        @Bean
        @ConditionalOnMissingBean(IdempotencyObserver.class)
        MicrometerIdempotencyObserver micrometerIdempotencyObserver(ObservationRegistry registry) {
            return new MicrometerIdempotencyObserver(registry);
        }
    }
}
