package dev.idempotency.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.IdempotentOperation;
import dev.idempotency.ResultType;
import dev.idempotency.Tier;
import dev.idempotency.jdbc.DuplicateBusinessNumbers;
import dev.idempotency.metrics.MicrometerBacklogGauges;
import dev.idempotency.metrics.MicrometerIdempotencyListener;
import dev.idempotency.store.CircuitBreakerStore;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InMemoryIdempotencyStore;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * The Grafana dashboard and the Prometheus alert rules under {@code docs/monitoring/} name only meters the library
 * really publishes, with labels they really have: the library's listener, backlog gauges and reconciliation gauge
 * are driven on a {@link PrometheusMeterRegistry}, and every metric and label of every expression must be in its
 * scrape. A renamed meter or tag fails this test. Each alert is explained in docs/operations.md.
 */
class MonitoringFilesTest {

    private static final Path DOCS = Path.of("..", "docs");
    private static final Pattern METRIC = Pattern.compile("\\b(idempotency_[a-z0-9_]+)\\b");
    private static final Pattern SELECTOR = Pattern.compile("\\b(idempotency_[a-z0-9_]+)\\{([^}]*)}");
    private static final Pattern MATCHER = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(?:=~|!~|!=|=)");
    private static final Pattern BY = Pattern.compile("\\b(?:by|without)\\s*\\(([^)]*)\\)");

    /** Every series the library publishes, by name, with its label names. */
    private static Map<String, Set<String>> published;

    @BeforeAll
    static void scrape() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        MicrometerIdempotencyListener metrics = new MicrometerIdempotencyListener(registry);
        InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
        IdempotentExecutor executor = IdempotentExecutor.builder(store).listener(metrics).build();
        IdempotentOperation<String> send = IdempotentOperation
                .builder("Payouts.send", Tier.IRREVERSIBLE, ResultType.of(String.class)).build();
        executor.execute(send, "K1", new Object[] {"K1"}, () -> "sent");
        executor.execute(send, "K1", new Object[] {"K1"}, () -> "sent");
        for (int i = 0; i < 2; i++) {
            // the first fails (its outcome is unknown, the key held); the second is refused
            assertThatThrownBy(() -> executor.execute(send, "K2", new Object[] {"K2"}, () -> {
                throw new IllegalStateException("gateway timeout");
            })).isInstanceOf(RuntimeException.class);
        }
        metrics.purged(3, Instant.now(), null);
        metrics.purged(0, Instant.now(), new IllegalStateException("purge failed"));
        metrics.onStateChange(CircuitBreakerStore.State.CLOSED, CircuitBreakerStore.State.OPEN, null);
        new MicrometerBacklogGauges(store, registry, Clock.systemUTC()).run();
        IdempotencyStore down = (IdempotencyStore) Proxy.newProxyInstance(IdempotencyStore.class.getClassLoader(),
                new Class<?>[] {IdempotencyStore.class}, (proxy, method, args) -> {
                    throw new IllegalStateException("the store is down");
                });
        new MicrometerBacklogGauges(down, registry, Clock.systemUTC()).run();
        DuplicateBusinessNumbers.builder(new SimpleDriverDataSource(new org.h2.Driver(), "jdbc:h2:mem:unused"))
                .table("orders").numberColumn("order_no").timestampColumn("created_at").build().bindTo(registry);

        published = new HashMap<>();
        for (String line : registry.scrape().split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            int brace = line.indexOf('{');
            int space = line.indexOf(' ');
            String name = line.substring(0, brace >= 0 && brace < space ? brace : space);
            Set<String> labels = published.computeIfAbsent(name, n -> new HashSet<>());
            if (brace >= 0 && brace < space) {
                Matcher m = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"").matcher(line.substring(brace));
                while (m.find()) {
                    labels.add(m.group(1));
                }
            }
        }
    }

    private static List<String> expressions(JsonNode node) {
        List<String> found = new ArrayList<>();
        if (node.isObject()) {
            node.properties().forEach(e -> {
                if (e.getKey().equals("expr") && e.getValue().isString()) {
                    found.add(e.getValue().stringValue());
                } else {
                    found.addAll(expressions(e.getValue()));
                }
            });
        } else if (node.isArray()) {
            node.forEach(n -> found.addAll(expressions(n)));
        }
        return found;
    }

    private static JsonNode dashboard() throws IOException {
        return JsonMapper.builder().build()
                .readTree(Files.readString(DOCS.resolve("monitoring/grafana-dashboard.json")));
    }

    private static JsonNode rules() throws IOException {
        return YAMLMapper.builder().build()
                .readTree(Files.readString(DOCS.resolve("monitoring/prometheus-alerts.yml")));
    }

    /** The problems of one expression: metrics or labels the library does not publish. */
    private static List<String> problems(String expr) {
        List<String> problems = new ArrayList<>();
        Set<String> metrics = new HashSet<>();
        Matcher m = METRIC.matcher(expr);
        while (m.find()) {
            metrics.add(m.group(1));
        }
        if (metrics.isEmpty()) {
            problems.add("names no idempotency metric: " + expr);
        }
        Set<String> labels = new HashSet<>();
        for (String metric : metrics) {
            if (!published.containsKey(metric)) {
                problems.add(metric + " is not published (in: " + expr + ")");
            } else {
                labels.addAll(published.get(metric));
            }
        }
        Matcher selector = SELECTOR.matcher(expr);
        while (selector.find()) {
            Matcher label = MATCHER.matcher(selector.group(2));
            while (label.find()) {
                if (!published.getOrDefault(selector.group(1), Set.of()).contains(label.group(1))) {
                    problems.add(selector.group(1) + " has no label " + label.group(1) + " (in: " + expr + ")");
                }
            }
        }
        Matcher by = BY.matcher(expr);
        while (by.find()) {
            for (String label : by.group(1).split(",")) {
                if (!label.isBlank() && !labels.contains(label.trim())) {
                    problems.add("no metric of it has the label " + label.trim() + " (in: " + expr + ")");
                }
            }
        }
        return problems;
    }

    @Test
    void theCheckSeesTheMetersTheLibraryPublishes() {
        assertThat(published).containsKeys("idempotency_calls_total", "idempotency_duplicates_total",
                "idempotency_backlog_needs_review", "idempotency_backlog_stuck_oldest_seconds",
                "idempotency_purge_last_success", "idempotency_store_circuit_state", "idempotency_claim_seconds_count",
                "idempotency_reconciliation_duplicates", "idempotency_backlog_refresh_failures_total");
        assertThat(problems("sum by (outcome) (rate(idempotency_calls_total{outcome=\"executed\"}[5m]))")).isEmpty();
        assertThat(problems("max(idempotency_backlog_held_for_review) > 0")).singleElement().asString()
                .contains("idempotency_backlog_held_for_review is not published");
        assertThat(problems("sum by (tenant) (idempotency_calls_total{result=\"ok\"})")).hasSize(2);
    }

    @Test
    void everyDashboardExpressionNamesPublishedMetersAndLabels() throws IOException {
        List<String> exprs = expressions(dashboard());
        assertThat(exprs).hasSizeGreaterThan(10);
        assertThat(exprs.stream().flatMap(e -> problems(e).stream())).isEmpty();
        // outcomes, duplicates, backlog, purge, store down, latency
        assertThat(String.join("\n", exprs)).contains("idempotency_calls_total", "idempotency_duplicates_total",
                "idempotency_backlog_needs_review", "idempotency_purge_last_success", "idempotency_store_circuit_state",
                "idempotency_claim_seconds_sum");
    }

    @Test
    void everyAlertNamesPublishedMetersAndIsExplainedInTheOperationsGuide() throws IOException {
        JsonNode rules = rules();
        List<String> exprs = expressions(rules);
        assertThat(exprs.stream().flatMap(e -> problems(e).stream())).isEmpty();
        String guide = Files.readString(DOCS.resolve("operations.md"));
        List<String> alerts = new ArrayList<>();
        for (JsonNode group : rules.get("groups")) {
            for (JsonNode rule : group.get("rules")) {
                String alert = rule.get("alert").stringValue();
                alerts.add(alert);
                assertThat(rule.get("annotations").get("summary")).as(alert).isNotNull();
                assertThat(guide).as("docs/operations.md explains " + alert).contains("### `" + alert + "`");
            }
        }
        assertThat(alerts).contains("IdempotencyKeyHeldForReview", "IdempotencyKeysStuck",
                "IdempotencyPurgeNotRunning", "IdempotencyDuplicatesRefused");
    }
}
