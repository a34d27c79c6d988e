package dev.idempotency.benchmarks.load;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.DoubleSummaryStatistics;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.HdrHistogram.Histogram;

/** The load run's figures as Markdown: the latencies side by side at every rate, then the knees. */
final class Report {

    private Report() {
    }

    static String markdown(String run, Instant started, Instant ended, String[] args, Map<String, String> options,
            String machine, List<Double> loadAverages, LoadRun.Phase one, LoadRun.Phase three) {
        StringBuilder md = new StringBuilder();
        Duration took = Duration.between(started, ended);
        md.append(String.format(Locale.ROOT, "Run `%s`, %s, %d min %02d s.%n%n", run, LoadRun.utc(started),
                took.toMinutes(), took.toSecondsPart()));
        md.append("- Machine: ").append(machine).append(".\n");
        DoubleSummaryStatistics load = loadAverages.stream().mapToDouble(Double::doubleValue).summaryStatistics();
        if (load.getCount() > 0) {
            md.append(String.format(Locale.ROOT, "- Load average (1 min) sampled at every step: %.1f to %.1f, mean"
                    + " %.1f: the machine was shared with other builds while this ran.%n", load.getMin(),
                    load.getMax(), load.getAverage()));
        }
        md.append("- Command: `benchmarks/load.sh").append(args.length == 0 ? "" : " " + String.join(" ", args))
                .append("`; options: ").append(options).append(".\n\n");
        latencies(md, one);
        if (three != null) {
            latencies(md, three);
        }
        md.append("The knee: the first of two rates in a row of the ladder at which p99 exceeded ")
                .append(String.format(Locale.ROOT, "%.0f", LoadRun.KNEE_FACTOR))
                .append(" × the variant's own unloaded p99 (in brackets, the last rate below it; a p99 above that"
                        + " bound is in bold in the tables above).\n\n");
        md.append("| nodes | duplicates | unloaded p99, guarded / unguarded (ms) | knee, guarded (req/s)"
                + " | knee, unguarded (req/s) | guarded / unguarded |\n|---|---|---|---|---|---|\n");
        knees(md, one);
        if (three != null) {
            knees(md, three);
        }
        return md.toString();
    }

    private static void latencies(StringBuilder md, LoadRun.Phase phase) {
        md.append(phase.nodes() == 1 ? "One node" : phase.nodes() + " nodes, one database")
                .append(": latency from the intended start (ms), guarded and unguarded in alternating slices. Generator"
                        + " late: how late the generator's own pacer was at worst (the machine's other work; it is"
                        + " part of the latencies).\n\n");
        md.append("| rate (req/s) | duplicates | guarded p50 / p99 / p99.9 | unguarded p50 / p99 / p99.9"
                + " | ratio p50 | ratio p99 | ratio p99.9 | failures g / u | generator late, max ms g / u |\n"
                + "|---|---|---|---|---|---|---|---|---|\n");
        for (int d : duplicates(phase)) {
            row(md, phase, String.format(Locale.ROOT, "unloaded (%.0f)", rateOf(phase.unloaded())), d,
                    phase.unloaded().get(new LoadRun.Variant(true, d)),
                    phase.unloaded().get(new LoadRun.Variant(false, d)));
        }
        for (Map.Entry<Double, Map<LoadRun.Variant, OpenLoop.Result>> rate : phase.ladder().entrySet()) {
            for (int d : duplicates(phase)) {
                OpenLoop.Result g = rate.getValue().get(new LoadRun.Variant(true, d));
                OpenLoop.Result u = rate.getValue().get(new LoadRun.Variant(false, d));
                if (g != null || u != null) {
                    row(md, phase, String.format(Locale.ROOT, "%.0f", rate.getKey()), d, g, u);
                }
            }
        }
        md.append('\n');
        if (duplicates(phase).contains(50)) {
            retries(md, phase);
        }
    }

    /** With 50% duplicates: the first requests and their retries apart. */
    private static void retries(StringBuilder md, LoadRun.Phase phase) {
        md.append("The same, 50% duplicates: the first requests and their retries (every second request) apart,"
                + " p50 / p99 (ms).\n\n");
        md.append("| rate (req/s) | guarded, first | guarded, retry | unguarded, first | unguarded, retry |\n"
                + "|---|---|---|---|---|\n");
        LoadRun.Variant g = new LoadRun.Variant(true, 50);
        LoadRun.Variant u = new LoadRun.Variant(false, 50);
        retryRow(md, String.format(Locale.ROOT, "unloaded (%.0f)", rateOf(phase.unloaded())),
                phase.unloaded().get(g), phase.unloaded().get(u));
        for (Map.Entry<Double, Map<LoadRun.Variant, OpenLoop.Result>> rate : phase.ladder().entrySet()) {
            if (rate.getValue().containsKey(g) || rate.getValue().containsKey(u)) {
                retryRow(md, String.format(Locale.ROOT, "%.0f", rate.getKey()), rate.getValue().get(g),
                        rate.getValue().get(u));
            }
        }
        md.append('\n');
    }

    private static void retryRow(StringBuilder md, String rate, OpenLoop.Result g, OpenLoop.Result u) {
        md.append("| ").append(rate).append(" | ").append(pair(g == null ? null : g.firsts())).append(" | ")
                .append(pair(g == null ? null : g.repeats())).append(" | ")
                .append(pair(u == null ? null : u.firsts())).append(" | ")
                .append(pair(u == null ? null : u.repeats())).append(" |\n");
    }

    private static String pair(Histogram h) {
        return h == null ? "–" : ms(h.getValueAtPercentile(50) / 1000.0) + " / "
                + ms(h.getValueAtPercentile(99) / 1000.0);
    }

    private static double rateOf(Map<LoadRun.Variant, OpenLoop.Result> results) {
        return results.values().iterator().next().rate();
    }

    private static List<Integer> duplicates(LoadRun.Phase phase) {
        List<Integer> d = new ArrayList<>();
        for (LoadRun.Variant v : phase.variants()) {
            if (!d.contains(v.duplicatePercent())) {
                d.add(v.duplicatePercent());
            }
        }
        return d;
    }

    private static void row(StringBuilder md, LoadRun.Phase phase, String rate, int duplicates, OpenLoop.Result g,
            OpenLoop.Result u) {
        double boundG = LoadRun.KNEE_FACTOR * phase.unloaded().get(new LoadRun.Variant(true, duplicates)).millis(99);
        double boundU = LoadRun.KNEE_FACTOR * phase.unloaded().get(new LoadRun.Variant(false, duplicates)).millis(99);
        md.append("| ").append(rate).append(" | ").append(duplicates).append("% | ")
                .append(triple(g, boundG)).append(" | ").append(triple(u, boundU)).append(" | ")
                .append(ratio(g, u, 50)).append(" | ").append(ratio(g, u, 99)).append(" | ")
                .append(ratio(g, u, 99.9)).append(" | ")
                .append(g == null ? "–" : g.failures()).append(" / ").append(u == null ? "–" : u.failures())
                .append(" | ").append(late(g)).append(" / ").append(late(u)).append(" |\n");
    }

    private static String triple(OpenLoop.Result r, double bound) {
        if (r == null) {
            return "– (past its knee)";
        }
        String p99 = ms(r.millis(99));
        return String.format(Locale.ROOT, "%s / %s / %s", ms(r.millis(50)),
                r.millis(99) > bound ? "**" + p99 + "**" : p99, ms(r.millis(99.9)));
    }

    private static String late(OpenLoop.Result r) {
        return r == null ? "–" : String.format(Locale.ROOT, "%.0f", r.maxPacerLateNanos() / 1e6);
    }

    private static String ratio(OpenLoop.Result g, OpenLoop.Result u, double percentile) {
        if (g == null || u == null) {
            return "–";
        }
        return String.format(Locale.ROOT, "%.2f", g.millis(percentile) / u.millis(percentile));
    }

    private static String ms(double millis) {
        return millis >= 100 ? String.format(Locale.ROOT, "%,.0f", millis)
                : String.format(Locale.ROOT, millis >= 10 ? "%.1f" : "%.2f", millis);
    }

    private static void knees(StringBuilder md, LoadRun.Phase phase) {
        for (int d : duplicates(phase)) {
            LoadRun.Variant g = new LoadRun.Variant(true, d);
            LoadRun.Variant u = new LoadRun.Variant(false, d);
            Double kg = phase.knees().get(g);
            Double ku = phase.knees().get(u);
            md.append("| ").append(phase.nodes()).append(" | ").append(d).append("% | ")
                    .append(ms(phase.unloaded().get(g).millis(99))).append(" / ")
                    .append(ms(phase.unloaded().get(u).millis(99))).append(" | ")
                    .append(knee(phase, g)).append(" | ").append(knee(phase, u)).append(" | ")
                    .append(kg == null || ku == null ? "–" : String.format(Locale.ROOT, "%.2f", kg / ku))
                    .append(" |\n");
        }
    }

    private static String knee(LoadRun.Phase phase, LoadRun.Variant v) {
        Double knee = phase.knees().get(v);
        if (knee != null && phase.unconfirmed().contains(v)) {
            return String.format(Locale.ROOT, "%.0f (the last rate: unconfirmed)", knee);
        }
        if (knee == null) {
            return String.format(Locale.ROOT, "above %.0f (held at every rate)", phase.maxRate());
        }
        double held = 0;
        for (Map.Entry<Double, Map<LoadRun.Variant, OpenLoop.Result>> rate : phase.ladder().entrySet()) {
            if (rate.getKey() < knee && rate.getValue().containsKey(v)) {
                held = rate.getKey();
            }
        }
        return String.format(Locale.ROOT, "%.0f (%s)", knee, held == 0 ? "none held" : String.format(Locale.ROOT,
                "%.0f", held));
    }
}
