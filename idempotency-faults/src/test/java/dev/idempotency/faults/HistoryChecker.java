package dev.idempotency.faults;

import dev.idempotency.Tier;
import dev.idempotency.faults.History.Event;
import dev.idempotency.faults.History.Type;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Judges a whole history (Jepsen's way) against the model of the library: per key,
 * <ul>
 *   <li>{@link Tier#IRREVERSIBLE}: at most one effect, ever (a crash or an unknown outcome may leave none or one,
 *       never two);</li>
 *   <li>{@link Tier#REVERSIBLE}: exactly one committed effect once every request got a definite answer (more than
 *       one is a duplicate; none although the requests were answered is a wrong answer);</li>
 *   <li>every {@code ok} answer equals the committed effect (an {@code ok} whose effect is gone, or another
 *       attempt's, is a wrong answer); a {@code REVERSIBLE} request never ends "outcome unknown";</li>
 *   <li>no key stuck: no claim left {@code IN_FLIGHT} after quiescence (every request answered, one last request
 *       per key included, so that a crashed claim past its lease was met by a caller), no request without a
 *       definite answer within its bound.</li>
 * </ul>
 */
final class HistoryChecker {

    /** The verdict: counts, and one line per finding (for the failure message). */
    record Verdict(int keys, int duplicatedEffects, int wrongAnswers, int stuckKeys, List<String> findings) {

        boolean valid() {
            return duplicatedEffects == 0 && wrongAnswers == 0 && stuckKeys == 0;
        }
    }

    private HistoryChecker() {
    }

    /**
     * What the database holds after quiescence for the keys that start with {@code prefix}: the claims still in
     * flight in the store's table, and the values of the orders committed in the business table.
     */
    record Stored(Set<String> inFlight, Map<String, List<String>> committed) {

        static Stored read(JdbcTemplate jdbc, Tables tables, String prefix) {
            Set<String> inFlight = new TreeSet<>();
            for (String idemKey : jdbc.queryForList("SELECT idem_key FROM " + tables.idempotency()
                    + " WHERE status = 'IN_FLIGHT' AND idem_key LIKE ?", String.class, "%" + prefix + "%")) {
                inFlight.add(idemKey.substring(idemKey.indexOf(prefix)));
            }
            Map<String, List<String>> committed = new HashMap<>();
            jdbc.query("SELECT ref, val FROM " + tables.business() + " WHERE kind = 'ORDER' AND ref LIKE ?",
                    rs -> {
                        committed.computeIfAbsent(rs.getString(1), k -> new ArrayList<>()).add(rs.getString(2));
                    }, prefix + "%");
            return new Stored(inFlight, committed);
        }
    }

    /**
     * @param events     the whole history
     * @param tiers      the tier of every key of the run
     * @param committed  REVERSIBLE keys: the values of the effects committed in the database after quiescence
     * @param inFlight   keys whose claim is still {@code IN_FLIGHT} after quiescence
     */
    static Verdict check(List<Event> events, Map<String, Tier> tiers, Map<String, List<String>> committed,
            Set<String> inFlight) {
        Map<String, List<String>> effects = new HashMap<>();
        Map<String, List<Event>> answers = new HashMap<>();
        // request -> its last event (an invocation not followed by a definite answer is undetermined)
        Map<String, Event> lastOfRequest = new LinkedHashMap<>();
        for (Event e : events) {
            switch (e.type()) {
                case EFFECT -> effects.computeIfAbsent(e.key(), k -> new ArrayList<>()).add(e.value());
                case OK, INFO, FAIL -> answers.computeIfAbsent(e.key(), k -> new ArrayList<>()).add(e);
                default -> {
                }
            }
            if (e.request() != null && e.type() != Type.EFFECT) {
                lastOfRequest.put(e.request(), e);
            }
        }
        List<String> findings = new ArrayList<>();
        int duplicated = 0;
        int wrong = 0;
        Set<String> stuck = new TreeSet<>(inFlight);
        for (String key : inFlight) {
            findings.add(key + ": still IN_FLIGHT after quiescence (every request answered, nothing running)");
        }
        for (Event last : lastOfRequest.values()) {
            if (last.type() != Type.OK && last.type() != Type.INFO) {
                stuck.add(last.key());
                findings.add(last.key() + ": request " + last.request() + " got no definite answer (last: "
                        + last.type() + " " + last.value() + ")");
            }
        }
        for (Map.Entry<String, Tier> entry : tiers.entrySet()) {
            String key = entry.getKey();
            List<String> done = entry.getValue() == Tier.REVERSIBLE
                    ? committed.getOrDefault(key, List.of())
                    : effects.getOrDefault(key, List.of());
            if (done.size() > 1) {
                duplicated++;
                findings.add(key + " (" + entry.getValue() + "): " + done.size() + " effects " + done);
            }
            boolean answered = false;
            boolean flagged = false;
            for (Event a : answers.getOrDefault(key, List.of())) {
                if (a.type() == Type.OK) {
                    answered = true;
                    if (!done.contains(a.value())) {
                        wrong++;
                        findings.add(key + ": request " + a.request() + " got ok " + a.value()
                                + " but the effects are " + done);
                    }
                } else if (a.type() == Type.INFO && entry.getValue() == Tier.REVERSIBLE) {
                    wrong++;
                    flagged = true;
                    findings.add(key + ": REVERSIBLE request " + a.request() + " ended unknown: " + a.value());
                }
            }
            if (entry.getValue() == Tier.REVERSIBLE && done.isEmpty() && !answered && !flagged
                    && !stuck.contains(key)) {
                wrong++;
                findings.add(key + " (REVERSIBLE): no committed effect although every request was answered");
            }
        }
        return new Verdict(tiers.size(), duplicated, wrong, stuck.size(), findings);
    }
}
