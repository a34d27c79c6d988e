package dev.idempotency;

import dev.idempotency.IdempotencyAdmin.Operation;
import dev.idempotency.IdempotencyEvent.Outcome;
import dev.idempotency.store.Backlog;
import dev.idempotency.store.IdempotencyAudit;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;
import tools.jackson.databind.node.ArrayNode;

/**
 * The answers to the five questions a team asks before a tool with side effects goes to production
 * ({@code docs/production-checklist.md}), per operation: tier, key expression, ttl, what a call does when the store is
 * down, confirmation gate and compensation from the inventory ({@code operations.json}), and, at run time, what this
 * node has counted since it started: runs, duplicates intercepted, unguarded runs, outcomes held for review.
 * Rendered as Markdown (for a pull request or a wiki) and as JSON (for tools).
 *
 * <pre>{@code
 * // run time: count outcomes, then report
 * IdempotencyReport.Counts counts = new IdempotencyReport.Counts();
 * IdempotentExecutor executor = IdempotentExecutor.builder(store).listener(counts).build();
 * String page = IdempotencyReport.of(admin.operations()).counts(counts).confirmationGate(gate != null).toMarkdown();
 * }</pre>
 *
 * At build time, {@code java -cp idempotency-core.jar:jackson... dev.idempotency.IdempotencyReport [--json]
 * target/classes/META-INF/idempotency/operations.json} prints the build-time half.
 */
public final class IdempotencyReport {

    /** The ttl under which a writing operation is flagged: the retry window of the processor's warning. */
    static final Duration RETRY_WINDOW = Duration.ofHours(24);

    private final List<Operation> operations;
    private @Nullable Counts counts;
    private @Nullable Boolean confirmationGate;
    private @Nullable List<Backlog> backlog;
    private @Nullable String backlogUnavailable;
    private @Nullable Instant backlogAt;
    private @Nullable List<IdempotencyAudit.Entry> resolutions;
    private @Nullable String resolutionsUnavailable;

    private IdempotencyReport(List<Operation> operations) {
        this.operations = List.copyOf(operations);
    }

    /** A report on {@code operations} ({@link IdempotencyAdmin#operations()}). */
    public static IdempotencyReport of(List<Operation> operations) {
        return new IdempotencyReport(Objects.requireNonNull(operations, "operations"));
    }

    /** Adds what this node counted since it started. */
    public IdempotencyReport counts(Counts counts) {
        this.counts = Objects.requireNonNull(counts, "counts");
        return this;
    }

    /**
     * Adds what waits for an operator as the store holds it ({@link IdempotencyAdmin#backlog()}), read at {@code at}:
     * the {@code NEEDS_REVIEW} backlog and the age of its oldest entry, and the claims stuck past their lease, per
     * operation (every node's, unlike the counts).
     */
    public IdempotencyReport backlog(List<Backlog> backlog, Instant at) {
        this.backlog = List.copyOf(backlog);
        this.backlogAt = Objects.requireNonNull(at, "at");
        this.backlogUnavailable = null;
        return this;
    }

    /** Says why the backlog could not be read (the store cannot count by status, or failed). */
    public IdempotencyReport backlogUnavailable(String reason) {
        this.backlogUnavailable = Objects.requireNonNull(reason, "reason");
        this.backlog = null;
        return this;
    }

    /**
     * Reads the backlog from {@code admin} into this report, or says why it could not: a store that cannot count, or
     * that fails, leaves the rest of the report standing.
     */
    public IdempotencyReport backlog(IdempotencyAdmin admin, Instant at) {
        try {
            return backlog(admin.backlog(), at);
        } catch (RuntimeException e) {
            return backlogUnavailable(e.getClass().getSimpleName() + ": " + e.getMessage());
        }
    }

    /**
     * Adds the latest resolutions by hand, as the audit holds them ({@link IdempotencyAdmin#resolutions(int)}), the
     * newest first: who resolved which key, when and why.
     */
    public IdempotencyReport resolutions(List<IdempotencyAudit.Entry> resolutions) {
        this.resolutions = List.copyOf(resolutions);
        this.resolutionsUnavailable = null;
        return this;
    }

    /** Says why the resolutions by hand could not be read (the audit failed). */
    public IdempotencyReport resolutionsUnavailable(String reason) {
        this.resolutionsUnavailable = Objects.requireNonNull(reason, "reason");
        this.resolutions = null;
        return this;
    }

    /** Says whether a {@link ConfirmationGate} is configured (known at run time only). */
    public IdempotencyReport confirmationGate(boolean configured) {
        this.confirmationGate = configured;
        return this;
    }

    /** One Markdown page: a table of every operation, then the run-time counts when there are some. */
    public String toMarkdown() {
        StringBuilder md = new StringBuilder("# Idempotent operations: the five questions\n\n");
        md.append("| operation | method | tier (1) | key (2) | ttl (3) | store down (3) | confirmation (4) |"
                + " compensation (5) |\n|---|---|---|---|---|---|---|---|\n");
        for (Operation op : operations) {
            md.append("| ").append(cell(op.name())).append(" | ").append(cell(method(op))).append(" | ")
                    .append(op.tier()).append(" | ")
                    .append(op.tier() == Tier.READ_ONLY ? "none" : "`" + cell(op.key()) + "`").append(" | ")
                    .append(op.tier() == Tier.READ_ONLY ? "n/a" : op.ttl() + (shortTtl(op) ? " (under 24h)" : ""))
                    .append(" | ").append(op.tier() == Tier.READ_ONLY ? "n/a" : op.onStoreDown()).append(" | ")
                    .append(cell(confirmation(op))).append(" | ")
                    .append(op.compensate() == null ? "none" : cell(op.compensate())).append(" |\n");
        }
        md.append("\n(1) which calls have side effects; (2) where the key comes from; (3) how long a key is kept and"
                + " what a call does when it cannot be stored; (4) who confirms an irreversible write; (5) how a"
                + " duplicate is undone or reviewed. See docs/production-checklist.md.\n");
        if (counts != null) {
            md.append("\n## Since this node started\n\n| operation | executed | duplicates intercepted |"
                    + " unguarded | held for review | in progress | key reused | failed |\n"
                    + "|---|---|---|---|---|---|---|---|\n");
            for (Operation op : operations) {
                if (op.tier() == Tier.READ_ONLY) {
                    continue;
                }
                Map<Outcome, Long> c = counts.of(op.name());
                md.append("| ").append(cell(op.name())).append(" | ").append(c.get(Outcome.EXECUTED)).append(" | ")
                        .append(c.get(Outcome.REPLAYED) + c.get(Outcome.REPLAYED_CACHED)).append(" | ")
                        .append(c.get(Outcome.UNGUARDED)).append(" | ").append(c.get(Outcome.OUTCOME_UNKNOWN))
                        .append(" | ").append(c.get(Outcome.IN_PROGRESS)).append(" | ")
                        .append(c.get(Outcome.KEY_REUSED)).append(" | ").append(c.get(Outcome.FAILED)).append(" |\n");
            }
        }
        if (backlogUnavailable != null) {
            md.append("\n## Waiting for an operator\n\nNot available: ").append(cell(backlogUnavailable)).append('\n');
        } else if (backlog != null) {
            md.append("\n## Waiting for an operator (as stored, every node)\n\n");
            if (backlog.isEmpty()) {
                md.append("Nothing: no NEEDS_REVIEW record, no claim stuck past its lease.\n");
            } else {
                md.append("| operation | needs review | oldest needs review | stuck claims | longest stuck |\n"
                        + "|---|---|---|---|---|\n");
                for (Backlog b : backlog) {
                    md.append("| ").append(cell(b.operation())).append(" | ").append(b.needsReview()).append(" | ")
                            .append(age(b.oldestNeedsReview())).append(" | ").append(b.stuck()).append(" | ")
                            .append(age(b.oldestStuckLease())).append(" |\n");
                }
                md.append("\nResolve each key with IdempotencyAdmin (release, resolveExecuted) or the endpoint's write"
                        + " operation; see docs/production-checklist.md, question 5.\n");
            }
        }
        if (resolutionsUnavailable != null) {
            md.append("\n## Resolved by hand\n\nNot available: ").append(cell(resolutionsUnavailable)).append('\n');
        } else if (resolutions != null) {
            md.append("\n## Resolved by hand (latest first)\n\n");
            if (resolutions.isEmpty()) {
                md.append("None recorded.\n");
            } else {
                md.append("| when | operation | key | tier | was | action | by | reason |\n"
                        + "|---|---|---|---|---|---|---|---|\n");
                for (IdempotencyAudit.Entry e : resolutions) {
                    md.append("| ").append(e.at()).append(" | ").append(cell(e.operation())).append(" | ")
                            .append(cell(e.key())).append(" | ").append(e.tier()).append(" | ").append(e.before())
                            .append(" | ").append(e.action()).append(" | ").append(cell(e.by().actor()))
                            .append(" | ").append(cell(e.by().reason())).append(" |\n");
                }
            }
        }
        return md.toString();
    }

    /** How long ago {@code since} was, as the backlog was read: {@code 3h12m}, or {@code -} for none. */
    private String age(@Nullable Instant since) {
        if (since == null || backlogAt == null) {
            return "-";
        }
        Duration d = Duration.between(since, backlogAt);
        if (d.isNegative()) {
            d = Duration.ZERO;
        }
        return d.toDays() > 0 ? d.toDays() + "d" + d.toHoursPart() + "h"
                : d.toHours() > 0 ? d.toHours() + "h" + d.toMinutesPart() + "m"
                : d.toMinutes() > 0 ? d.toMinutes() + "m" + d.toSecondsPart() + "s" : d.toSeconds() + "s";
    }

    /** The same facts as JSON: {@code {"operations": [{...}]}}, with {@code "counts"} per operation at run time. */
    public String toJson() {
        JsonMapper mapper = JsonMapper.builder().build();
        ObjectNode root = mapper.createObjectNode();
        ArrayNode list = root.putArray("operations");
        for (Operation op : operations) {
            ObjectNode o = list.addObject();
            o.put("operation", op.name());
            o.put("method", method(op));
            o.put("tier", op.tier().name());
            o.put("key", op.key());
            o.put("ttl", op.ttl().toString());
            o.put("shortTtl", shortTtl(op));
            o.put("onStoreDown", op.onStoreDown().name());
            o.put("confirmation", confirmation(op));
            if (op.compensate() == null) {
                o.putNull("compensate");
            } else {
                o.put("compensate", op.compensate());
            }
            if (counts != null && op.tier() != Tier.READ_ONLY) {
                ObjectNode c = o.putObject("counts");
                counts.of(op.name()).forEach((outcome, n) -> c.put(outcome.tagValue(), n));
            }
        }
        if (backlogUnavailable != null) {
            root.put("backlogUnavailable", backlogUnavailable);
        } else if (backlog != null) {
            ArrayNode waiting = root.putArray("backlog");
            for (Backlog b : backlog) {
                ObjectNode o = waiting.addObject();
                o.put("operation", b.operation());
                o.put("needsReview", b.needsReview());
                putInstant(o, "oldestNeedsReview", b.oldestNeedsReview());
                o.put("oldestNeedsReviewAgeSeconds", seconds(b.oldestNeedsReview()));
                o.put("stuck", b.stuck());
                putInstant(o, "oldestStuckLease", b.oldestStuckLease());
                o.put("longestStuckSeconds", seconds(b.oldestStuckLease()));
            }
        }
        if (resolutionsUnavailable != null) {
            root.put("resolutionsUnavailable", resolutionsUnavailable);
        } else if (resolutions != null) {
            ArrayNode resolved = root.putArray("resolutions");
            for (IdempotencyAudit.Entry e : resolutions) {
                ObjectNode o = resolved.addObject();
                o.put("at", e.at().toString());
                o.put("operation", e.operation());
                o.put("key", e.key());
                o.put("tier", e.tier().name());
                o.put("before", e.before().name());
                o.put("action", e.action().name());
                o.put("actor", e.by().actor());
                o.put("reason", e.by().reason());
            }
        }
        return mapper.writerWithDefaultPrettyPrinter().writeValueAsString(root);
    }

    private static void putInstant(ObjectNode o, String field, @Nullable Instant instant) {
        if (instant == null) {
            o.putNull(field);
        } else {
            o.put(field, instant.toString());
        }
    }

    private long seconds(@Nullable Instant since) {
        return since == null || backlogAt == null ? 0 : Math.max(0, Duration.between(since, backlogAt).toSeconds());
    }

    private static boolean shortTtl(Operation op) {
        return op.tier() != Tier.READ_ONLY && op.ttl().compareTo(RETRY_WINDOW) < 0;
    }

    private String confirmation(Operation op) {
        if (op.tier() != Tier.IRREVERSIBLE) {
            return "n/a";
        }
        if (confirmationGate == null) {
            return "ConfirmationGate, if one is configured";
        }
        return confirmationGate ? "ConfirmationGate" : "none: runs on the first request";
    }

    private static String method(Operation op) {
        return op.className().substring(op.className().lastIndexOf('.') + 1) + "." + op.method() + "("
                + String.join(", ", op.parameterTypes().stream()
                        .map(t -> t.substring(t.lastIndexOf('.') + 1)).toList()) + ")";
    }

    private static String cell(String text) {
        return text.replace("|", "\\|").replace("\n", " ");
    }

    /**
     * Counts every outcome per operation on this node, since it started: register it as a listener of the executor
     * ({@link IdempotentExecutor.Builder#listener}). Thread-safe.
     */
    public static final class Counts implements IdempotencyListener {
        private final ConcurrentHashMap<String, EnumMap<Outcome, LongAdder>> byOperation = new ConcurrentHashMap<>();

        @Override
        public void onEvent(IdempotencyEvent event) {
            byOperation.computeIfAbsent(event.operation(), k -> {
                EnumMap<Outcome, LongAdder> m = new EnumMap<>(Outcome.class);
                for (Outcome o : Outcome.values()) {
                    m.put(o, new LongAdder());
                }
                return m;
            }).get(event.outcome()).increment();
        }

        /** Every outcome of {@code operation} and how many times it happened (zeros included). */
        public Map<Outcome, Long> of(String operation) {
            EnumMap<Outcome, Long> snapshot = new EnumMap<>(Outcome.class);
            EnumMap<Outcome, LongAdder> m = byOperation.get(operation);
            for (Outcome o : Outcome.values()) {
                snapshot.put(o, m == null ? 0L : m.get(o).sum());
            }
            return snapshot;
        }
    }

    /**
     * Prints the build-time report of the {@code operations.json} files named: Markdown, or JSON with
     * {@code --json}.
     */
    public static void main(String[] args) throws IOException {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        boolean json = false;
        List<Operation> all = new ArrayList<>();
        for (String arg : args) {
            if (arg.equals("--json")) {
                json = true;
                continue;
            }
            try (InputStream in = Files.newInputStream(Path.of(arg))) {
                all.addAll(IdempotencyAdmin.parse(in));
            }
        }
        if (all.isEmpty()) {
            System.err.println("usage: IdempotencyReport [--json] operations.json...");
            System.exit(2);
        }
        all.sort(java.util.Comparator.comparing(Operation::name));
        IdempotencyReport report = of(all);
        out.print(json ? report.toJson() + "\n" : report.toMarkdown());
    }
}
