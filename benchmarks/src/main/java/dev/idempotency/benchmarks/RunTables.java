package dev.idempotency.benchmarks;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Locale;

/**
 * Per-run table names. {@link BenchmarkRunner} picks one run id, creates and pre-fills every table once, hands the id
 * to each JMH fork as the system property {@value #PROPERTY}, and drops the tables at the end. A benchmark started
 * without the runner (plain JMH) makes its own id and cleans up after itself in its trial tear-down.
 */
public final class RunTables {

    /** The system property that carries the run id into the JMH forks. */
    public static final String PROPERTY = "idempotency.bench.run";

    private RunTables() {
    }

    /** A fresh run id: {@code bm_} and 8 hex digits. */
    public static String newRunId() {
        byte[] bytes = new byte[4];
        new SecureRandom().nextBytes(bytes);
        return "bm_" + HexFormat.of().formatHex(bytes);
    }

    /** The run id handed down by the runner, or null when a benchmark runs on its own. */
    public static String sharedRunId() {
        String id = System.getProperty(PROPERTY);
        if (id == null || id.isBlank()) {
            return null;
        }
        if (!id.matches("bm_[0-9a-f]{8}")) {
            throw new IllegalArgumentException(PROPERTY + " must look like bm_0123abcd, was '" + id + "'");
        }
        return id;
    }

    /** The business table of orders. */
    public static String orders(String run) {
        return run + "_orders";
    }

    /** The guard table of one guard and prefill size, e.g. {@code bm_0123abcd_c_p1000000}. */
    public static String guard(String run, Guard guard, int prefill) {
        return run + "_" + guard.name().toLowerCase(Locale.ROOT) + "_p" + prefill;
    }
}
