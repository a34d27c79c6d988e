package dev.idempotency.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The Boot wiring of the Redis pre-filter that needs no Redis: the pre-filter connects at its first command, so a
 * context starts (or refuses to) without one.
 */
class RedisAutoConfigurationTest {

    static final String SECRET = "the-boot-tests-redis-secret-0123456789";

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
            .withUserConfiguration(IdempotencyAutoConfigurationTest.GreeterConfiguration.class,
                    IdempotencyAutoConfigurationTest.InMemoryStoreConfiguration.class)
            .withPropertyValues("idempotency.redis.enabled=true", "idempotency.redis.url=redis://127.0.0.1:1");

    @Test
    void withoutASecretTheApplicationDoesNotStartAndSaysWhichPropertyIsMissing() {
        runner.run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("idempotency.redis.enabled=true needs idempotency.redis.secret")
                .hasMessageContaining("at least 32"));
        runner.withPropertyValues("idempotency.redis.secret=   ").run(context -> assertThat(context).hasFailed()
                .getFailure().rootCause().hasMessageContaining("needs idempotency.redis.secret"));
    }

    @Test
    void aShortSecretIsRefusedWithoutPrintingIt() {
        runner.withPropertyValues("idempotency.redis.secret=short-secret-of-23-char").run(context -> assertThat(context)
                .hasFailed().getFailure().rootCause().hasMessageContaining("at least 32 bytes")
                .hasMessageNotContaining("short-secret-of-23-char"));
        runner.withPropertyValues("idempotency.redis.secret=" + SECRET, "idempotency.redis.accepted-secrets=" + SECRET
                + ",too-short").run(context -> assertThat(context).hasFailed().getFailure()
                        .hasMessageContaining("idempotency.redis.accepted-secrets").hasMessageContaining("[1]")
                        .hasMessageNotContaining("too-short"));
    }

    @Test
    void theSecretIsNeverInTheStartupLine() {
        runner.withPropertyValues("idempotency.redis.secret=" + SECRET).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(IdempotencyAutoConfiguration.IdempotencyStoreFront.class).toString())
                    .contains("Redis pre-filter (").doesNotContain(SECRET);
        });
    }

    @Test
    void clusterNodesTakeThePlaceOfTheUrlAndTheStartupLineNamesThem() {
        runner.withPropertyValues("idempotency.redis.secret=" + SECRET,
                "idempotency.redis.cluster-nodes=redis://127.0.0.1:1,redis://127.0.0.1:2").run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(IdempotencyAutoConfiguration.IdempotencyStoreFront.class).toString())
                            .contains("Redis pre-filter (cluster 127.0.0.1:1,127.0.0.1:2, key-prefix");
                    RedisStoreLayer layer = (RedisStoreLayer) context
                            .getBean(IdempotencyAutoConfiguration.StoreLayer.class);
                    assertThat(layer.prefilter()).isNotNull().asString().startsWith("RedisPrefilter[cluster, ");
                });
        runner.withPropertyValues("idempotency.redis.secret=" + SECRET,
                "idempotency.redis.cluster-nodes=redis://127.0.0.1:1,redis-sentinel://127.0.0.1:2#m").run(context ->
                        assertThat(context).hasFailed().getFailure()
                                .hasMessageContaining("idempotency.redis.cluster-nodes refused")
                                .hasMessageContaining("cluster[1]"));
    }

    @Test
    void aSentinelUrlIsNamedInTheStartupLineWithoutItsPassword() {
        runner.withPropertyValues("idempotency.redis.secret=" + SECRET,
                "idempotency.redis.url=redis-sentinel://:sentinel-password@127.0.0.1:1,127.0.0.1:2/0#orders")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(IdempotencyAutoConfiguration.IdempotencyStoreFront.class).toString())
                            .contains("Redis pre-filter (sentinel master orders via 127.0.0.1:1,127.0.0.1:2,")
                            .doesNotContain("sentinel-password");
                });
    }

    /**
     * Starts a context with the Redis pre-filter on; run in a class loader without Micrometer's core, as in an
     * application that has none (a {@code FilteredClassLoader} cannot show it: the classes of this module, loaded by
     * the test's own class loader, still see Micrometer).
     */
    public static final class WithoutMicrometer implements Supplier<@Nullable String> {

        /** Null when the context started and has no Redis counters; otherwise what went wrong. */
        @Override
        public @Nullable String get() {
            String[] failure = {null};
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
                    .withUserConfiguration(IdempotencyAutoConfigurationTest.GreeterConfiguration.class,
                            IdempotencyAutoConfigurationTest.InMemoryStoreConfiguration.class)
                    .withPropertyValues("idempotency.redis.enabled=true", "idempotency.redis.url=redis://127.0.0.1:1",
                            "idempotency.redis.secret=" + SECRET)
                    .run(context -> {
                        if (context.getStartupFailure() != null) {
                            StringWriter trace = new StringWriter();
                            context.getStartupFailure().printStackTrace(new PrintWriter(trace));
                            failure[0] = trace.toString();
                        } else if (context.getBeansOfType(IdempotencyAutoConfiguration.StoreLayer.class).size() != 1
                                || !context.getBean(IdempotencyAutoConfiguration.IdempotencyStoreFront.class)
                                        .toString().contains("Redis pre-filter (")) {
                            failure[0] = "no Redis pre-filter in front of the store";
                        } else if (context.containsBean("idempotencyRedisPrefilterMeters")) {
                            failure[0] = "Redis counters without Micrometer";
                        }
                    });
            return failure[0];
        }
    }

    @Test
    void withoutMicrometerTheRedisPreFilterStartsWithoutItsCounters() throws Exception {
        List<URL> urls = new ArrayList<>();
        boolean hidden = false;
        for (String entry : classPath().split(File.pathSeparator)) {
            // Micrometer's core and what is built on it; spring-context's own micrometer-observation stays
            if (new File(entry).getName().matches("micrometer-(core|registry|test|observation-test).*")) {
                hidden = true;
                continue;
            }
            urls.add(url(entry));
        }
        assertThat(hidden).as("micrometer-core on the test class path").isTrue();
        try (URLClassLoader withoutMicrometer = new URLClassLoader(urls.toArray(URL[]::new),
                ClassLoader.getPlatformClassLoader())) {
            assertThat(withoutMicrometer.getResource("io/micrometer/core/instrument/MeterRegistry.class")).isNull();
            Thread thread = Thread.currentThread();
            ClassLoader previous = thread.getContextClassLoader();
            thread.setContextClassLoader(withoutMicrometer);
            try {
                @SuppressWarnings("unchecked")
                Supplier<String> run = (Supplier<String>) withoutMicrometer.loadClass(WithoutMicrometer.class.getName())
                        .getConstructor().newInstance();
                assertThat(run.get()).isNull();
            } finally {
                thread.setContextClassLoader(previous);
            }
        }
    }

    private static String classPath() {
        String surefire = System.getProperty("surefire.test.class.path");
        return surefire != null && !surefire.isBlank() ? surefire : System.getProperty("java.class.path");
    }

    private static URL url(String entry) {
        try {
            return new File(entry).toURI().toURL();
        } catch (MalformedURLException e) {
            throw new IllegalArgumentException(entry, e);
        }
    }
}
