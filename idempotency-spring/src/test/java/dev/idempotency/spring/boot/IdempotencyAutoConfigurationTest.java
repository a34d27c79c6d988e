package dev.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.ConfirmationGate;
import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotencyScope;
import dev.idempotency.Idempotent;
import dev.idempotency.IdempotentExecutor;
import dev.idempotency.ResolvedBy;
import dev.idempotency.Tier;
import dev.idempotency.cache.CaffeinePrefilter;
import dev.idempotency.codec.JacksonResultCodec;
import dev.idempotency.codec.ResultCodec;
import dev.idempotency.internal.Keys;
import dev.idempotency.jdbc.JdbcIdempotencyAudit;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.metrics.MicrometerIdempotencyListener;
import dev.idempotency.metrics.MicrometerIdempotencyObserver;
import dev.idempotency.spring.EnableIdempotency;
import dev.idempotency.spring.IdempotentAspect;
import dev.idempotency.spring.IdempotentAspectCustomizer;
import dev.idempotency.spring.LogLines;
import dev.idempotency.store.IdempotencyAudit;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.databind.json.JsonMapper;

class IdempotencyAutoConfigurationTest {

    private static final ResolvedBy BY = new ResolvedBy("test-operator", "checked by the test");

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class,
                    IdempotencyPurgeAutoConfiguration.class, DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
                    TransactionAutoConfiguration.class, JacksonAutoConfiguration.class))
            .withUserConfiguration(GreeterConfiguration.class);

    private final ApplicationContextRunner withoutDataSource = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class,
                    IdempotencyPurgeAutoConfiguration.class))
            .withUserConfiguration(GreeterConfiguration.class);

    /** An idempotent bean: counts its real executions. */
    public static class Greeter {
        final AtomicInteger runs = new AtomicInteger();

        @Idempotent(key = "#id", tier = Tier.REVERSIBLE)
        public String greet(String id, String name) {
            return "hello " + name + " #" + runs.incrementAndGet();
        }

        /** Read through this method: the bean is a proxy, whose own fields are not the target's. */
        public int runs() {
            return runs.get();
        }

        @Idempotent(key = "#id", tier = Tier.REVERSIBLE, ttl = "2h", lockTimeout = "3s", operation = "Greeter.custom")
        public String custom(String id) {
            return "custom #" + runs.incrementAndGet();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class GreeterConfiguration {
        @Bean
        Greeter greeter() {
            return new Greeter();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class CountingDataSourceConfiguration {
        @Bean
        CountingDataSource dataSource() {
            return new CountingDataSource(new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2)
                    .generateUniqueName(true).build());
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class InMemoryStoreConfiguration {
        @Bean
        InMemoryIdempotencyStore userStore() {
            return new InMemoryIdempotencyStore();
        }
    }

    private static IdempotencyRecord record(IdempotencyStore store, String operation, String key) {
        return store.find(Keys.hash(operation, "", Keys.normalize(key))).orElseThrow();
    }

    @Test
    void withADataSourceEverythingIsThereAndTheTableIsCreated() {
        runner.run(context -> {
            assertThat(context).hasNotFailed()
                    .hasSingleBean(JdbcIdempotencyStore.class)
                    .hasSingleBean(IdempotentExecutor.class)
                    .hasSingleBean(IdempotencyAdmin.class)
                    .hasSingleBean(IdempotentAspect.class)
                    .hasSingleBean(ResultCodec.class)
                    .hasSingleBean(IdempotencySchemaInitializer.class)
                    .hasSingleBean(IdempotencyPurgeScheduler.class)
                    .doesNotHaveBean(MicrometerIdempotencyListener.class)
                    .doesNotHaveBean(MicrometerIdempotencyObserver.class);
            assertThat(context.getBean(JdbcIdempotencyStore.class).tableName()).isEqualTo("idempotency_record");
            Greeter greeter = context.getBean(Greeter.class);
            assertThat(greeter.greet("K1", "ann")).isEqualTo("hello ann #1");
            assertThat(greeter.greet("K1", "ann")).isEqualTo("hello ann #1");
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> greeter.greet("K1", "bob"))
                    .isInstanceOf(IdempotencyKeyReusedException.class);
            assertThat(new JdbcTemplate(context.getBean(DataSource.class))
                    .queryForObject("SELECT COUNT(*) FROM idempotency_record", Integer.class)).isEqualTo(1);
        });
    }

    @Test
    void theCodecUsesTheApplicationsJsonMapper() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(JsonMapper.class);
            ResultCodec codec = context.getBean(ResultCodec.class);
            assertThat(codec).isInstanceOf(JacksonResultCodec.class);
            assertThat(codec.toString()).contains("JacksonResultCodec");
        });
    }

    @Test
    void withoutADataSourceThereIsNoJdbcStoreAndStartupSaysWhatIsMissing() {
        withoutDataSource.run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .hasMessageContaining("IdempotencyStore")
                    .hasMessageContaining("idempotency.enabled=false");
        });
        withoutDataSource.withUserConfiguration(InMemoryStoreConfiguration.class).run(context -> {
            assertThat(context).hasNotFailed()
                    .doesNotHaveBean(JdbcIdempotencyStore.class)
                    .doesNotHaveBean(IdempotencySchemaInitializer.class)
                    .hasSingleBean(IdempotentExecutor.class);
            assertThat(context.getBean(Greeter.class).greet("K1", "ann")).isEqualTo("hello ann #1");
            assertThat(context.getBean(InMemoryIdempotencyStore.class).size()).isEqualTo(1);
        });
    }

    @Test
    void springBootExplainsAMissingStoreAndWhatToDo() {
        withoutDataSource.run(context -> {
            FailureAnalysis analysis = new MissingIdempotencyStoreFailureAnalyzer()
                    .analyze(context.getStartupFailure());
            assertThat(analysis).isNotNull();
            assertThat(analysis.getDescription()).contains("has none");
            assertThat(analysis.getAction()).contains("idempotency-jdbc-store", "InMemoryIdempotencyStore",
                    "idempotency.enabled=false");
        });
        withoutDataSource.withBean("one", InMemoryIdempotencyStore.class, InMemoryIdempotencyStore::new)
                .withBean("two", InMemoryIdempotencyStore.class, InMemoryIdempotencyStore::new)
                .run(context -> {
                    FailureAnalysis analysis = new MissingIdempotencyStoreFailureAnalyzer()
                            .analyze(context.getStartupFailure());
                    assertThat(analysis).isNotNull();
                    assertThat(analysis.getDescription()).contains("several");
                    assertThat(analysis.getAction()).contains("@Primary");
                });
    }

    @Test
    void theFailureAnalyzerIsRegistered() throws java.io.IOException {
        java.util.Properties factories = org.springframework.core.io.support.PropertiesLoaderUtils.loadProperties(
                new org.springframework.core.io.UrlResource(IdempotencyAutoConfiguration.class.getProtectionDomain()
                        .getCodeSource().getLocation()).createRelative("META-INF/spring.factories"));
        assertThat(factories.getProperty("org.springframework.boot.diagnostics.FailureAnalyzer"))
                .isEqualTo(MissingIdempotencyStoreFailureAnalyzer.class.getName());
    }

    @Test
    void theApplicationsOwnBeansWin() {
        IdempotentExecutor mine = IdempotentExecutor.builder(new InMemoryIdempotencyStore()).build();
        ResultCodec myCodec = JacksonResultCodec.using(JacksonResultCodec.defaultMapper());
        runner.withUserConfiguration(InMemoryStoreConfiguration.class)
                .withBean("myExecutor", IdempotentExecutor.class, () -> mine)
                .withBean("myCodec", ResultCodec.class, () -> myCodec)
                .run(context -> {
                    assertThat(context).hasNotFailed()
                            .doesNotHaveBean(JdbcIdempotencyStore.class)
                            .doesNotHaveBean(IdempotencySchemaInitializer.class);
                    assertThat(context.getBean(IdempotentExecutor.class)).isSameAs(mine);
                    assertThat(context.getBean(ResultCodec.class)).isSameAs(myCodec);
                    assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(InMemoryIdempotencyStore.class);
                });
    }

    @Test
    void enableIdempotencyAndTheAutoConfigurationMakeOneAspect() {
        runner.withUserConfiguration(EnableIdempotencyConfiguration.class).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(IdempotentAspect.class)
                    .hasSingleBean(IdempotentExecutor.class);
            assertThat(context.getBean(Greeter.class).greet("K1", "ann")).isEqualTo("hello ann #1");
            assertThat(context.getBean(Greeter.class).greet("K1", "ann")).isEqualTo("hello ann #1");
        });
    }

    @Configuration(proxyBeanMethods = false)
    @EnableIdempotency
    static class EnableIdempotencyConfiguration {
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnCustomizer {
        @Bean
        IdempotentAspectCustomizer threeDays() {
            return aspect -> aspect.setDefaultTtl(Duration.ofDays(3));
        }
    }

    @Test
    void anApplicationsCustomizerOverridesTheProperties() {
        runner.withUserConfiguration(InMemoryStoreConfiguration.class, OwnCustomizer.class)
                .withPropertyValues("idempotency.default-ttl=7d")
                .run(context -> {
                    context.getBean(Greeter.class).greet("K1", "ann");
                    IdempotencyRecord r = record(context.getBean(InMemoryIdempotencyStore.class), "Greeter.greet",
                            "K1");
                    assertThat(Duration.between(r.createdAt(), r.expiresAt()))
                            .isBetween(Duration.ofDays(3), Duration.ofDays(3).plusSeconds(5));
                });
    }

    @Test
    void propertiesAreBoundAndTheDefaultsApplyWhereTheAnnotationLeavesItsOwn() {
        runner.withUserConfiguration(InMemoryStoreConfiguration.class)
                .withPropertyValues("idempotency.default-ttl=7d", "idempotency.default-lock-timeout=2s",
                        "idempotency.jdbc.table-name=orders_idem", "idempotency.prefilter.maximum-size=42",
                        "idempotency.prefilter.max-bytes=2MB",
                        "idempotency.purge.interval=15m", "idempotency.purge.batch-size=50",
                        "idempotency.jdbc.initialize-schema=never")
                .run(context -> {
                    IdempotencyProperties p = context.getBean(IdempotencyProperties.class);
                    assertThat(p.getDefaultTtl()).isEqualTo(Duration.ofDays(7));
                    assertThat(p.getDefaultLockTimeout()).isEqualTo(Duration.ofSeconds(2));
                    assertThat(p.getJdbc().getTableName()).isEqualTo("orders_idem");
                    assertThat(p.getJdbc().getInitializeSchema())
                            .isEqualTo(IdempotencyProperties.SchemaInitialization.NEVER);
                    assertThat(p.getPrefilter().getMaximumSize()).isEqualTo(42);
                    assertThat(p.getPrefilter().getMaxBytes().toBytes()).isEqualTo(2L << 20);
                    assertThat(p.getPurge().getInterval()).isEqualTo(Duration.ofMinutes(15));
                    assertThat(p.getPurge().getBatchSize()).isEqualTo(50);
                    assertThat(context.getBean(IdempotencyPurgeScheduler.class).interval())
                            .isEqualTo(Duration.ofMinutes(15));

                    Greeter greeter = context.getBean(Greeter.class);
                    greeter.greet("K1", "ann");
                    greeter.custom("K2");
                    InMemoryIdempotencyStore store = context.getBean(InMemoryIdempotencyStore.class);
                    IdempotencyRecord byDefault = record(store, "Greeter.greet", "K1");
                    assertThat(Duration.between(byDefault.createdAt(), byDefault.expiresAt()))
                            .isBetween(Duration.ofDays(7), Duration.ofDays(7).plusSeconds(5));
                    IdempotencyRecord ownTtl = record(store, "Greeter.custom", "K2");
                    assertThat(Duration.between(ownTtl.createdAt(), ownTtl.expiresAt()))
                            .isBetween(Duration.ofHours(2), Duration.ofHours(2).plusSeconds(5));
                });
    }

    @Test
    void theScheduledPurgeAlsoDeletesTheAuditsAttemptsOfKeysWithoutARecord() {
        runner.run(context -> {
            JdbcIdempotencyAudit audit = context.getBean(JdbcIdempotencyAudit.class);
            byte[] gone = Keys.hash("Greeter.greet", "", "gone");
            audit.attempt(gone, new IdempotencyAudit.Attempt("Greeter.greet", "gone", Tier.REVERSIBLE,
                    IdempotencyRecord.Status.IN_FLIGHT, IdempotencyAudit.Attempt.Kind.REFUSED_IN_PROGRESS, "waited",
                    Instant.now()));
            context.getBean(Greeter.class).greet("kept", "ann");
            byte[] kept = Keys.hash("Greeter.greet", "", "kept");
            audit.attempt(kept, new IdempotencyAudit.Attempt("Greeter.greet", "kept", Tier.REVERSIBLE,
                    IdempotencyRecord.Status.IN_FLIGHT, IdempotencyAudit.Attempt.Kind.REFUSED_IN_PROGRESS, "waited",
                    Instant.now()));

            context.getBean(IdempotencyPurgeScheduler.class).purge();

            assertThat(audit.attempts(gone, 10)).isEmpty();
            assertThat(audit.attempts(kept, 10)).singleElement().extracting(IdempotencyAudit.Attempt::key)
                    .isEqualTo("kept");
        });
    }

    @Test
    void aBadPropertyFailsStartupNamingIt() {
        for (String bad : new String[] {"idempotency.default-ttl=0s", "idempotency.default-lock-timeout=-1s",
                "idempotency.prefilter.maximum-size=0", "idempotency.prefilter.maximum-age=0s",
                "idempotency.prefilter.max-bytes=0",
                "idempotency.purge.interval=0s", "idempotency.purge.batch-size=0",
                "idempotency.max-waiters-per-key=0"}) {
            runner.withPropertyValues(bad).run(context -> {
                assertThat(context).as(bad).hasFailed();
                assertThat(context.getStartupFailure()).as(bad).rootCause()
                        .hasMessageContaining(bad.substring(0, bad.indexOf('=')));
            });
        }
    }

    @Test
    void theTableNameReachesTheStoreAndTheSchema() {
        runner.withPropertyValues("idempotency.jdbc.table-name=orders_idem").run(context -> {
            assertThat(context.getBean(JdbcIdempotencyStore.class).tableName()).isEqualTo("orders_idem");
            context.getBean(Greeter.class).greet("K1", "ann");
            assertThat(new JdbcTemplate(context.getBean(DataSource.class))
                    .queryForObject("SELECT COUNT(*) FROM orders_idem", Integer.class)).isEqualTo(1);
        });
    }

    @Test
    void withThePrefilterACachedReplayRunsNoStatementAtAll() {
        runner.withUserConfiguration(CountingDataSourceConfiguration.class).run(context -> {
            CountingDataSource dataSource = context.getBean(CountingDataSource.class);
            Greeter greeter = context.getBean(Greeter.class);
            assertThat(greeter.greet("K1", "ann")).isEqualTo("hello ann #1");
            dataSource.reset();

            assertThat(greeter.greet("K1", "ann")).isEqualTo("hello ann #1");
            assertThat(greeter.greet("K1", "ann")).isEqualTo("hello ann #1");

            assertThat(dataSource.statements()).isZero();
            assertThat(greeter.runs()).isEqualTo(1);
        });
    }

    @Test
    void anEvictionThroughTheAdminIsSeenAtOnceDespiteThePrefilter() {
        runner.run(context -> {
            Greeter greeter = context.getBean(Greeter.class);
            assertThat(greeter.greet("K1", "ann")).isEqualTo("hello ann #1");
            assertThat(greeter.greet("K1", "ann")).isEqualTo("hello ann #1");

            assertThat(context.getBean(IdempotencyAdmin.class).evict("Greeter.greet", "K1", BY)).isTrue();

            assertThat(greeter.greet("K1", "ann")).isEqualTo("hello ann #2");
        });
    }

    @Test
    void withoutThePrefilterAReplayReadsTheStore() {
        runner.withUserConfiguration(CountingDataSourceConfiguration.class)
                .withPropertyValues("idempotency.prefilter.enabled=false")
                .run(context -> {
                    CountingDataSource dataSource = context.getBean(CountingDataSource.class);
                    Greeter greeter = context.getBean(Greeter.class);
                    greeter.greet("K1", "ann");
                    dataSource.reset();

                    assertThat(greeter.greet("K1", "ann")).isEqualTo("hello ann #1");
                    assertThat(dataSource.statements()).isPositive();
                });
    }

    @Test
    void aResultWhoseTransactionRolledBackIsNeverReplayedFromTheCache() {
        runner.withUserConfiguration(CountingDataSourceConfiguration.class).run(context -> {
            CountingDataSource dataSource = context.getBean(CountingDataSource.class);
            Greeter greeter = context.getBean(Greeter.class);
            TransactionTemplate tx = new TransactionTemplate(
                    context.getBean(org.springframework.transaction.PlatformTransactionManager.class));

            tx.executeWithoutResult(status -> {
                assertThat(greeter.greet("K1", "ann")).isEqualTo("hello ann #1");
                status.setRollbackOnly();
            });
            dataSource.reset();

            assertThat(greeter.greet("K1", "ann")).isEqualTo("hello ann #2");
            assertThat(dataSource.statements()).isPositive();
            dataSource.reset();
            tx.executeWithoutResult(status -> assertThat(greeter.greet("K2", "bob")).isEqualTo("hello bob #3"));
            assertThat(greeter.greet("K2", "bob")).isEqualTo("hello bob #3");
            assertThat(greeter.greet("K1", "ann")).isEqualTo("hello ann #2");
            int afterCommit = dataSource.statements();
            assertThat(greeter.greet("K2", "bob")).isEqualTo("hello bob #3");
            assertThat(dataSource.statements()).isEqualTo(afterCommit);
        });
    }

    @Test
    void theApplicationsOwnPrefilterIsNotWrappedTwice() {
        withoutDataSource.withBean(CaffeinePrefilter.class,
                () -> CaffeinePrefilter.wrap(new InMemoryIdempotencyStore()).build()).run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(Greeter.class).greet("K1", "ann")).isEqualTo("hello ann #1");
                    assertThat(context.getBean(CaffeinePrefilter.class).cachedOutcomes()).isEqualTo(1);
                });
    }

    @Test
    void withoutCaffeineThePrefilterIsOffUnlessAskedFor() {
        ApplicationContextRunner noCaffeine = runner.withUserConfiguration(CountingDataSourceConfiguration.class)
                .withClassLoader(new FilteredClassLoader("com.github.benmanes.caffeine"));
        noCaffeine.run(context -> {
            assertThat(context).hasNotFailed();
            CountingDataSource dataSource = context.getBean(CountingDataSource.class);
            context.getBean(Greeter.class).greet("K1", "ann");
            dataSource.reset();
            context.getBean(Greeter.class).greet("K1", "ann");
            assertThat(dataSource.statements()).isPositive();
        });
        noCaffeine.withPropertyValues("idempotency.prefilter.enabled=true").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("Caffeine");
        });
    }

    @Test
    void metersOnlyWithAMeterRegistry() {
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).run(context -> {
            assertThat(context).hasSingleBean(MicrometerIdempotencyListener.class);
            Greeter greeter = context.getBean(Greeter.class);
            greeter.greet("K1", "ann");
            greeter.greet("K1", "ann");
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            assertThat(registry.get("idempotency.calls").tags("operation", "Greeter.greet", "outcome", "executed")
                    .counter().count()).isEqualTo(1);
            assertThat(registry.get("idempotency.calls").tags("outcome", "replayed_cached").counter().count())
                    .isEqualTo(1);
        });
        runner.run(context -> assertThat(context).doesNotHaveBean(MicrometerIdempotencyListener.class));
    }

    @Test
    void observationsOnlyWithAnObservationRegistry() {
        TestObservationRegistry observations = TestObservationRegistry.create();
        runner.withBean(TestObservationRegistry.class, () -> observations).run(context -> {
            assertThat(context).hasSingleBean(MicrometerIdempotencyObserver.class);
            context.getBean(Greeter.class).greet("K1", "ann");
            io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat(observations)
                    .hasObservationWithNameEqualTo("idempotency.call").that()
                    .hasLowCardinalityKeyValue("operation", "Greeter.greet")
                    .hasLowCardinalityKeyValue("outcome", "executed");
        });
        runner.run(context -> assertThat(context).doesNotHaveBean(MicrometerIdempotencyObserver.class));
    }

    @Test
    void thePurgeCanBeSwitchedOff() {
        runner.withPropertyValues("idempotency.purge.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(IdempotencyPurgeScheduler.class));
    }

    @Test
    void theSchemaIsLeftAloneWhenToldNeverAndTheMissingTableFailsStartupSayingHowToCreateIt() {
        runner.withPropertyValues("idempotency.jdbc.initialize-schema=never").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure())
                    .hasMessageContaining("the table idempotency_record does not exist")
                    .hasMessageContaining("create it with the script dev/idempotency/jdbc/schema-h2.sql")
                    .hasMessageContaining("or set idempotency.jdbc.initialize-schema=always to have Spring Boot"
                            + " create it at startup");
        });
    }

    @Test
    void resolutionsAreAuditedInTheTableBesideTheStoresWhichBootCreates() {
        runner.run(context -> {
            context.getBean(Greeter.class).greet("K-audit", "ann");
            IdempotencyAdmin admin = context.getBean(IdempotencyAdmin.class);
            assertThat(context.getBean(dev.idempotency.store.IdempotencyAudit.class))
                    .isInstanceOf(dev.idempotency.jdbc.JdbcIdempotencyAudit.class);
            assertThat(admin.evict("Greeter.greet", "K-audit", BY)).isTrue();
            assertThat(admin.history("Greeter.greet", "K-audit")).singleElement()
                    .satisfies(e -> assertThat(e.by()).isEqualTo(BY));
            assertThat(new JdbcTemplate(context.getBean(javax.sql.DataSource.class)).queryForObject(
                    "select count(*) from idempotency_record_audit where actor = 'test-operator'", Integer.class))
                    .isEqualTo(1);
        });
    }

    /** A DataSource whose store table was made by hand, as a migration would, without the audit table. */
    @Configuration(proxyBeanMethods = false)
    static class StoreTableOnlyConfiguration {
        @Bean
        javax.sql.DataSource dataSource() {
            return new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2).generateUniqueName(true)
                    .addScript("classpath:dev/idempotency/jdbc/schema-h2.sql").build();
        }
    }

    @Test
    void aMissingAuditTableIsSaidAtStartupWithItsScriptButDoesNotFailIt() {
        try (LogLines log = LogLines.open()) {
            runner.withUserConfiguration(StoreTableOnlyConfiguration.class)
                    .withPropertyValues("idempotency.jdbc.initialize-schema=never").run(context -> {
                        assertThat(context).hasNotFailed();
                        assertThat(log.containing("the idempotency audit table idempotency_record_audit cannot be"
                                + " read")).singleElement().asString().startsWith("WARN")
                                .contains("create it with the script dev/idempotency/jdbc/audit-h2.sql")
                                .contains("every resolution by hand");
                    });
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnAspect {
        @Bean
        IdempotentAspect ownAspect(IdempotentExecutor executor) {
            IdempotentAspect aspect = new IdempotentAspect(executor);
            aspect.setDefaultTtl(Duration.ofDays(2));
            return aspect;
        }
    }

    @Test
    void anAspectOfTheApplicationsOwnReplacesTheAutoConfiguredOneAndIsApplied() {
        runner.withUserConfiguration(InMemoryStoreConfiguration.class, OwnAspect.class).run(context -> {
            assertThat(context).hasNotFailed().getBeans(IdempotentAspect.class).containsOnlyKeys("ownAspect");
            Greeter greeter = context.getBean(Greeter.class);
            assertThat(greeter.greet("K1", "ann")).isEqualTo("hello ann #1");
            assertThat(greeter.greet("K1", "ann")).isEqualTo("hello ann #1");
            assertThat(greeter.runs()).isEqualTo(1);
            IdempotencyRecord r = record(context.getBean(InMemoryIdempotencyStore.class), "Greeter.greet", "K1");
            assertThat(Duration.between(r.createdAt(), r.expiresAt()))
                    .isBetween(Duration.ofDays(2), Duration.ofDays(2).plusSeconds(5));
        });
    }

    @Test
    void everythingIsOffWhenDisabled() {
        runner.withPropertyValues("idempotency.enabled=false").run(context -> assertThat(context).hasNotFailed()
                .doesNotHaveBean(IdempotentExecutor.class)
                .doesNotHaveBean(IdempotentAspect.class)
                .doesNotHaveBean(IdempotencyStore.class)
                .doesNotHaveBean(IdempotencyPurgeScheduler.class));
    }

    @Test
    void anAdminOfTheApplicationsOwnReplacesTheAutoConfiguredOne() {
        IdempotencyAdmin own = IdempotencyAdmin.builder(new InMemoryIdempotencyStore()).build();
        runner.withBean("myAdmin", IdempotencyAdmin.class, () -> own).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(IdempotencyAdmin.class);
            assertThat(context.getBean(IdempotencyAdmin.class)).isSameAs(own);
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class TwoScopes {
        @Bean
        IdempotencyScope tenantScope() {
            return () -> "tenant";
        }

        @Bean
        IdempotencyScope principalScope() {
            return () -> "principal";
        }
    }

    @Test
    void twoScopeBeansAndNoPrimaryFailStartupNamingBoth() {
        runner.withUserConfiguration(TwoScopes.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasStackTraceContaining("found 2 IdempotencyScope beans"
                    + " (tenantScope, principalScope) and none is @Primary");
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class TwoGates {
        @Bean
        ConfirmationGate fourEyes() {
            return call -> { };
        }

        @Bean
        ConfirmationGate managerApproval() {
            return call -> { };
        }
    }

    @Test
    void twoConfirmationGatesAndNoPrimaryFailStartupNamingBoth() {
        runner.withUserConfiguration(TwoGates.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasStackTraceContaining("found 2 ConfirmationGate beans"
                    + " (fourEyes, managerApproval) and none is @Primary");
        });
    }

    @Test
    void startupSaysOnceThatThereIsNoScopeAndOnceWhatWasWired() {
        try (LogLines log = LogLines.open()) {
            runner.run(context -> {
                assertThat(context).hasNotFailed();
                assertThat(log.containing("no IdempotencyScope bean, so a key means the same for every caller"))
                        .hasSize(1).allSatisfy(line -> assertThat(line).startsWith("INFO "));
                assertThat(log.containing("Idempotency: store ")).singleElement().satisfies(line -> assertThat(line)
                        .startsWith("INFO Idempotency: store JdbcIdempotencyStore[idempotency_record, h2] behind the"
                                + " pre-filter (maximum-size 10000, maximum-age ")
                        .contains("), circuit breaker (failure-threshold 5, open-for PT10S); scope none;")
                        // the report's counter is the one listener Boot registers without a MeterRegistry
                        .endsWith("; scope none; confirmation gate none; listeners idempotencyReportCounts;"
                                + " operations 2; advice proxy"
                                + " (order " + Ordered.LOWEST_PRECEDENCE + ")"));
            });
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OneScope {
        @Bean
        IdempotencyScope tenantScope() {
            return () -> "tenant";
        }
    }

    @Test
    void withAScopeBeanNothingIsSaidAboutScopes() {
        try (LogLines log = LogLines.open()) {
            runner.withUserConfiguration(OneScope.class).run(context -> {
                assertThat(context).hasNotFailed();
                assertThat(log.containing("no IdempotencyScope bean")).isEmpty();
                assertThat(log.containing("; scope tenantScope;")).hasSize(1);
            });
        }
    }
}
