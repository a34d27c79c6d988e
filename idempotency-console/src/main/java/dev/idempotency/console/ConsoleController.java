package dev.idempotency.console;

import static dev.idempotency.console.Html.age;
import static dev.idempotency.console.Html.at;
import static dev.idempotency.console.Html.esc;

import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.ResolvedBy;
import dev.idempotency.spring.boot.IdempotencyResolver;
import dev.idempotency.store.Backlog;
import dev.idempotency.store.IdempotencyAudit;
import dev.idempotency.store.IdempotencyRecord.Status;
import jakarta.servlet.http.HttpServletRequest;
import java.net.URI;
import java.security.Principal;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.http.CacheControl;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.util.UriComponentsBuilder;

/**
 * The console's pages: the overview (backlog, keys held for review, stuck keys, MCP calls waiting for an approver,
 * latest resolutions), one key with its context, history and the two resolutions, and the duplicate-business-number
 * reports. Every page needs an authenticated principal; a resolution is done as that principal, with a reason,
 * through {@link IdempotencyResolver} (one transaction with its audit entry), and an approval of an MCP call as that
 * principal through {@code McpConfirmations.approve}.
 */
@Controller
@RequestMapping("${idempotency.console.path:/idempotency}")
class ConsoleController {

    /** How many keys of each list the overview shows. */
    static final int LISTED = 50;
    /** How many resolutions the overview shows. */
    static final int RESOLUTIONS = 20;

    private final Supplier<@Nullable IdempotencyAdmin> admin;
    private final IdempotencyResolver resolver;
    private final Supplier<List<DuplicatesReport>> duplicates;
    private final Supplier<@Nullable ConfirmationAnswers> confirmations;
    private final Clock clock;
    private final String base;
    private final Set<String> roles;

    /** One reconciliation check, run when the page is asked for. */
    interface DuplicatesReport {
        /** The table and column checked. */
        String name();

        /** The report's body as escaped HTML. */
        String html();
    }

    ConsoleController(Supplier<@Nullable IdempotencyAdmin> admin, IdempotencyResolver resolver,
            Supplier<List<DuplicatesReport>> duplicates, Supplier<@Nullable ConfirmationAnswers> confirmations,
            Clock clock, IdempotencyConsoleProperties properties) {
        this.admin = admin;
        this.resolver = resolver;
        this.duplicates = duplicates;
        this.confirmations = confirmations;
        this.clock = clock;
        this.base = properties.getPath();
        this.roles = Set.copyOf(properties.getRoles());
    }

    @GetMapping({"", "/"})
    ResponseEntity<String> overview(HttpServletRequest request,
            @RequestParam(required = false) @Nullable String approved) {
        ResponseEntity<String> refused = refusal(request);
        if (refused != null) {
            return refused;
        }
        return overviewPage(request, 200, approved == null ? "" : "<p class=\"banner done\" id=\"approved\">"
                + "Approved the call with key '" + esc(approved) + "': it runs once when its client sends it again"
                + " with its confirmation token.</p>");
    }

    /** The overview, with {@code banner} (escaped HTML) on top. */
    private ResponseEntity<String> overviewPage(HttpServletRequest request, int status, String banner) {
        IdempotencyAdmin theAdmin = admin.get();
        if (theAdmin == null) {
            return html(request, 503, "Unavailable", "<p>The application has no single idempotency store, so no"
                    + " IdempotencyAdmin: there is nothing to show.</p>");
        }
        Instant now = clock.instant();
        StringBuilder body = new StringBuilder(banner);
        try {
            List<Backlog> backlog = theAdmin.backlog();
            long held = backlog.stream().mapToLong(Backlog::needsReview).sum();
            long stuck = backlog.stream().mapToLong(Backlog::stuck).sum();
            Duration oldest = backlog.stream().map(Backlog::oldestNeedsReview).filter(i -> i != null)
                    .min(Instant::compareTo).map(i -> Duration.between(i, now)).orElse(null);
            body.append("<div class=\"tiles\">").append(tile("held for review", String.valueOf(held), held > 0))
                    .append(tile("stuck past their lease", String.valueOf(stuck), stuck > 0))
                    .append(tile("oldest held", age(oldest), oldest != null)).append("</div>\n");
            body.append("<h2>Backlog by operation</h2>");
            if (backlog.isEmpty()) {
                body.append("<p id=\"backlog-empty\">Nothing waits for an operator.</p>");
            } else {
                body.append("<table id=\"backlog\"><tr><th>operation</th><th>held for review</th><th>oldest held</th>"
                        + "<th>stuck</th><th>longest stuck</th></tr>");
                for (Backlog b : backlog) {
                    body.append("<tr><td>").append(esc(b.operation())).append("</td><td class=\"n\">")
                            .append(b.needsReview()).append("</td><td>").append(since(b.oldestNeedsReview(), now))
                            .append("</td><td class=\"n\">").append(b.stuck()).append("</td><td>")
                            .append(since(b.oldestStuckLease(), now)).append("</td></tr>");
                }
                body.append("</table>");
            }
            keys(request, body, "needs-review", "Held for review (outcome unknown)", theAdmin.needsReview(LISTED), now);
            keys(request, body, "stuck", "Stuck past their lease", theAdmin.stuck(LISTED), now);
        } catch (RuntimeException e) {
            body.append("<p class=\"banner error\">The store did not answer: ").append(esc(e.getMessage()))
                    .append("</p>");
        }
        approvals(request, body, now);
        body.append("<h2>Latest resolutions</h2>");
        try {
            history(body, theAdmin.resolutions(RESOLUTIONS), true);
        } catch (RuntimeException e) {
            body.append("<p class=\"banner error\">The audit could not be read: ").append(esc(e.getMessage()))
                    .append("</p>");
        }
        return html(request, status, "What waits for an operator", body.toString());
    }

    /**
     * The MCP calls waiting for an approver (a 2025-11-25 client without elicitation given a confirmation token),
     * each with an approval form; only when the application's {@code McpConfirmations} gives tokens.
     */
    private void approvals(HttpServletRequest request, StringBuilder body, Instant now) {
        ConfirmationAnswers source = confirmations.get();
        if (source == null || !source.approvals()) {
            return;
        }
        body.append("<h2>MCP calls waiting for an approver</h2>");
        List<ConfirmationAnswers.Waiting> waiting;
        try {
            waiting = source.waiting(LISTED);
        } catch (RuntimeException e) {
            body.append("<p class=\"banner error\">The waiting calls could not be read: ").append(esc(e.getMessage()))
                    .append("</p>");
            return;
        }
        if (waiting.isEmpty()) {
            body.append("<p id=\"approvals-empty\">None.</p>");
            return;
        }
        body.append("<p>Each call was made by an MCP client without elicitation: it got a confirmation token, and runs"
                + " when it sends the token back only if a person approved it here. Approve only what you checked"
                + " with the person the call acts for; you cannot approve a call of your own. Your name and reason go"
                + " to the call's answers.</p>");
        String action = esc(request.getContextPath() + base + "/approve");
        body.append("<table id=\"approvals\"><tr><th>tool</th><th>principal</th><th>operation</th><th>key</th>"
                + "<th>what was shown</th><th>arguments' digest</th><th>requested</th><th>token expires</th>"
                + "<th>approve</th></tr>");
        for (ConfirmationAnswers.Waiting w : waiting) {
            body.append("<tr><td>").append(esc(w.tool())).append("</td><td>")
                    .append(esc(w.principal().isEmpty() ? "(stdio)" : w.principal())).append("</td><td>")
                    .append(esc(w.operation())).append("</td><td>").append(esc(w.key())).append("</td><td><pre>")
                    .append(esc(w.shown())).append("</pre></td><td><code>").append(esc(w.argumentDigest()))
                    .append("</code></td><td>").append(since(w.requestedAt(), now)).append("</td><td>")
                    .append(at(w.expiresAt())).append("</td><td>");
            if (w.approvedBy() != null) {
                body.append("<span class=\"approved\">approved by ").append(esc(w.approvedBy()))
                        .append(": runs when its client sends it again with its token</span></td></tr>");
                continue;
            }
            body.append("<form class=\"approve\" method=\"post\" action=\"")
                    .append(action).append("\">").append(Csrf.field(request))
                    .append(hidden("principal", w.principal())).append(hidden("operation", w.operation()))
                    .append(hidden("key", w.key())).append(hidden("digest", w.argumentDigest()))
                    .append("<label>Reason <textarea name=\"reason\" rows=\"2\" required maxlength=\"")
                    .append(ResolvedBy.MAX_REASON).append("\"></textarea></label><button type=\"submit\">Approve"
                            + "</button></form></td></tr>");
        }
        body.append("</table>");
    }

    private static String hidden(String name, String value) {
        return "<input type=\"hidden\" name=\"" + name + "\" value=\"" + esc(value) + "\">";
    }

    @PostMapping("/approve")
    ResponseEntity<String> approve(HttpServletRequest request, @RequestParam String principal,
            @RequestParam String operation, @RequestParam String key, @RequestParam String digest,
            @RequestParam(required = false) @Nullable String reason) {
        ResponseEntity<String> refused = postRefusal(request, "An approval");
        if (refused != null) {
            return refused;
        }
        ConfirmationAnswers source = confirmations.get();
        if (source == null || !source.approvals()) {
            return html(request, 404, "No approvals", "<p class=\"banner error\">The application has no"
                    + " McpConfirmations giving confirmation tokens: no call waits for an approver.</p>");
        }
        ResolvedBy by;
        try {
            by = new ResolvedBy(actor(request), reason == null ? "" : reason);
        } catch (IllegalArgumentException noReason) {
            return overviewPage(request, 400, "<p class=\"banner error\" id=\"problem\">Not approved: "
                    + esc(noReason.getMessage()) + "</p>");
        }
        int status;
        String problem;
        try {
            source.approve(principal, operation, key, digest, by);
            String to = UriComponentsBuilder.fromPath(request.getContextPath() + base + "/")
                    .queryParam("approved", "{k}").encode().buildAndExpand(key).toUriString();
            return ResponseEntity.status(303).location(URI.create(to)).cacheControl(CacheControl.noStore()).build();
        } catch (IllegalArgumentException e) {
            // the approver made the call: the one refusal that is about who asks
            status = 403;
            problem = e.getMessage();
        } catch (IdempotencyStoreException e) {
            status = 503;
            problem = e.getMessage();
        } catch (IllegalStateException e) {
            status = 409;
            problem = e.getMessage();
        }
        return overviewPage(request, status, "<p class=\"banner error\" id=\"problem\">Not approved: "
                + esc(problem) + "</p>");
    }

    private static String tile(String label, String value, boolean warn) {
        return "<div class=\"tile " + (warn ? "warn" : "ok") + "\"><b>" + esc(value) + "</b>" + esc(label) + "</div>";
    }

    private static String since(@Nullable Instant instant, Instant now) {
        return instant == null ? "-" : age(Duration.between(instant, now)) + " (" + at(instant) + ")";
    }

    private void keys(HttpServletRequest request, StringBuilder body, String id, String title,
            List<IdempotencyAdmin.Entry> entries, Instant now) {
        body.append("<h2>").append(esc(title)).append("</h2>");
        if (entries.isEmpty()) {
            body.append("<p id=\"").append(id).append("-empty\">None.</p>");
            return;
        }
        body.append("<table id=\"").append(id).append("\"><tr><th>operation</th><th>key</th><th>tier</th>"
                + "<th>claimed</th><th>lease until</th></tr>");
        for (IdempotencyAdmin.Entry e : entries) {
            body.append("<tr><td>").append(esc(e.operation())).append("</td><td><a href=\"")
                    .append(keyLink(request, e.operation(), "", e.key())).append("\">").append(esc(e.key()))
                    .append("</a></td><td>").append(esc(e.tier())).append("</td><td>")
                    .append(since(e.createdAt(), now)).append("</td><td>").append(at(e.leaseUntil()))
                    .append("</td></tr>");
        }
        body.append("</table>");
        if (entries.size() == LISTED) {
            body.append("<p>The first ").append(LISTED).append(" only.</p>");
        }
    }

    private String keyLink(HttpServletRequest request, String operation, String scope, String key) {
        Map<String, String> query = new LinkedHashMap<>();
        query.put("operation", operation);
        query.put("key", key);
        if (!scope.isEmpty()) {
            query.put("scope", scope);
        }
        return Html.link(request.getContextPath() + base + "/key", query);
    }

    private static void history(StringBuilder body, List<IdempotencyAudit.Entry> entries, boolean withKey) {
        if (entries.isEmpty()) {
            body.append("<p>None recorded.</p>");
            return;
        }
        body.append("<table class=\"history\"><tr><th>when</th><th>who</th><th>what</th>")
                .append(withKey ? "<th>operation</th><th>key</th>" : "").append("<th>status before</th>"
                        + "<th>reason</th></tr>");
        for (IdempotencyAudit.Entry e : entries) {
            body.append("<tr><td>").append(at(e.at())).append("</td><td>").append(esc(e.by().actor()))
                    .append("</td><td>").append(esc(e.action())).append("</td>");
            if (withKey) {
                body.append("<td>").append(esc(e.operation())).append("</td><td>").append(esc(e.key()))
                        .append("</td>");
            }
            body.append("<td>").append(esc(e.before())).append("</td><td>").append(esc(e.by().reason()))
                    .append("</td></tr>");
        }
        body.append("</table>");
    }

    @GetMapping("/key")
    ResponseEntity<String> key(HttpServletRequest request, @RequestParam String operation, @RequestParam String key,
            @RequestParam(defaultValue = "") String scope, @RequestParam(required = false) @Nullable String done) {
        ResponseEntity<String> refused = refusal(request);
        if (refused != null) {
            return refused;
        }
        return keyPage(request, 200, operation, scope, key, done != null ? null : "");
    }

    /**
     * The key's page, with {@code banner} (escaped HTML) on top; a null banner says the key was just resolved:
     * its latest audit entry is shown.
     */
    private ResponseEntity<String> keyPage(HttpServletRequest request, int status, String operation, String scope,
            String key, @Nullable String banner) {
        IdempotencyAdmin theAdmin = admin.get();
        if (theAdmin == null) {
            return html(request, 503, "Unavailable", "<p>The application has no IdempotencyAdmin.</p>");
        }
        Optional<IdempotencyAdmin.Entry> found;
        List<IdempotencyAudit.Entry> history;
        List<IdempotencyAudit.Attempt> attempts;
        try {
            found = theAdmin.find(operation, scope, key);
            history = theAdmin.history(operation, scope, key);
            attempts = theAdmin.attempts(operation, scope, key);
        } catch (IllegalArgumentException e) {
            return html(request, 400, "No such key", "<p class=\"banner error\">" + esc(e.getMessage()) + "</p>");
        }
        StringBuilder body = new StringBuilder(banner != null ? banner : history.isEmpty() ? ""
                : "<p class=\"banner done\" id=\"done\">" + esc(resolved(history.get(0))) + "</p>");
        Instant now = clock.instant();
        body.append("<table id=\"record\"><tr><th>operation</th><td>").append(esc(operation)).append("</td></tr>")
                .append("<tr><th>key</th><td>").append(esc(key)).append("</td></tr>");
        if (!scope.isEmpty()) {
            body.append("<tr><th>scope</th><td>").append(esc(scope)).append("</td></tr>");
        }
        theAdmin.operation(operation).ifPresent(op -> body.append("<tr><th>method</th><td><code>")
                .append(esc(op.className() + "." + op.method() + "(" + String.join(", ", op.parameterTypes())
                        + ")")).append("</code> returns <code>").append(esc(op.returnType()))
                .append("</code></td></tr><tr><th>key expression, ttl</th><td><code>").append(esc(op.key()))
                .append("</code>, ").append(esc(op.ttl())).append("</td></tr>"));
        if (found.isEmpty()) {
            body.append("<tr><th>status</th><td id=\"status\">no record: the next call with this key runs</td></tr>"
                    + "</table>");
            // the store keeps no scope: a key claimed under one (a tenant) is found by giving it
            body.append("<form id=\"scope\" method=\"get\" action=\"").append(esc(request.getContextPath() + base
                    + "/key")).append("\"><input type=\"hidden\" name=\"operation\" value=\"").append(esc(operation))
                    .append("\"><input type=\"hidden\" name=\"key\" value=\"").append(esc(key)).append("\">"
                    + "<label>Claimed under a scope (a tenant)? The store keeps none: give it to find the key"
                    + " <input name=\"scope\" value=\"").append(esc(scope)).append("\"></label><button type=\"submit\">"
                    + "Look again</button></form>");
        } else {
            IdempotencyAdmin.Entry e = found.get();
            String state = e.status() + (e.stale() ? " (stuck: its lease ran out)" : "")
                    + (e.expired() ? " (expired)" : "");
            body.append("<tr><th>tier</th><td>").append(esc(e.tier())).append("</td></tr><tr><th>status</th>"
                    + "<td id=\"status\">").append(esc(state)).append("</td></tr><tr><th>claimed</th><td>")
                    .append(since(e.createdAt(), now)).append("</td></tr><tr><th>lease until</th><td>")
                    .append(at(e.leaseUntil())).append("</td></tr><tr><th>expires</th><td>").append(at(e.expiresAt()))
                    .append("</td></tr><tr><th>result recorded</th><td>").append(e.hasResult() ? "yes" : "no")
                    .append("</td></tr><tr><th>arguments' digest</th><td><code id=\"digest\">")
                    .append(esc(e.argumentsDigest())).append("</code> (SHA-256 of the claiming call's arguments: a"
                            + " retry with other arguments is refused, so equal digests mean equal arguments)")
                    .append("</td></tr></table>");
        }
        // the context first (what met the key, what the user confirmed), then the decision
        attempts(body, found.orElse(null), attempts);
        answers(request, body, operation, scope, key, found.isEmpty());
        if (found.isPresent() && (found.get().status() == Status.NEEDS_REVIEW || found.get().stale())) {
            forms(request, body, operation, scope, key);
        }
        body.append("<h2>History</h2>");
        history(body, history, false);
        return html(request, status, "Key " + key, body.toString());
    }

    /**
     * The attempts that met the key, oldest first, after the record's claim (when the key was first claimed, or
     * last taken over): the audit keeps the ones that were not a plain first run or replay.
     */
    private static void attempts(StringBuilder body, IdempotencyAdmin.@Nullable Entry record,
            List<IdempotencyAudit.Attempt> attempts) {
        body.append("<h2>Attempts</h2>");
        if (record == null && attempts.isEmpty()) {
            body.append("<p id=\"attempts-none\">None recorded.</p>");
            return;
        }
        List<String[]> rows = new ArrayList<>();
        List<Instant> times = new ArrayList<>();
        for (IdempotencyAudit.Attempt a : attempts) {
            times.add(a.at());
            rows.add(new String[] {at(a.at()), what(a.kind()), a.met().toString(), a.detail()});
        }
        if (record != null) {
            // the claim the record holds now: the first one, or the one that took a stale claim over
            int i = 0;
            while (i < times.size() && times.get(i).isBefore(record.createdAt())) {
                i++;
            }
            rows.add(i, new String[] {at(record.createdAt()), "claimed the key", "-", "the record's claim, with"
                    + " the arguments' digest above"});
        }
        body.append("<table id=\"attempts\"><tr><th>when</th><th>what</th><th>status met</th><th>detail</th></tr>");
        for (String[] row : rows) {
            body.append("<tr><td class=\"t\">").append(row[0]).append("</td><td>").append(esc(row[1]))
                    .append("</td><td>")
                    .append(esc(row[2])).append("</td><td>").append(esc(row[3])).append("</td></tr>");
        }
        body.append("</table><p class=\"note\">Recorded: retries refused (in progress, held for review, other"
                + " arguments), stale claims taken over or held; not recorded: plain first runs and replays (the"
                + " meters count them).");
        if (attempts.size() >= IdempotencyAudit.ATTEMPTS_KEPT) {
            body.append(" The first ").append(IdempotencyAudit.ATTEMPTS_KEPT).append(" of this key only.");
        }
        body.append("</p>");
    }

    private static String what(IdempotencyAudit.Attempt.Kind kind) {
        return switch (kind) {
            case REFUSED_IN_PROGRESS -> "refused: another attempt in progress";
            case REFUSED_HELD -> "refused: outcome unknown, held for review";
            case KEY_REUSED -> "refused: key reused with other arguments";
            case TOOK_OVER_STALE -> "took over a stale claim and ran again";
            case HELD_STALE -> "found a stale claim and held it for review";
            case HELD_FOR_REVIEW -> "held for review";
        };
    }

    /**
     * For MCP calls, the users' confirmation answers to the key (when the application has {@code idempotency-mcp}
     * and its confirmation gate); without the record, links to the scopes of the principals who answered.
     */
    private void answers(HttpServletRequest request, StringBuilder body, String operation, String scope,
            String key, boolean missing) {
        ConfirmationAnswers source = confirmations.get();
        if (source == null || !source.available()) {
            return;
        }
        body.append("<h2>Confirmation answers (MCP)</h2>");
        List<ConfirmationAnswers.Answer> answers;
        try {
            answers = source.answers(operation, key);
        } catch (RuntimeException e) {
            body.append("<p class=\"banner error\">The answers could not be read: ").append(esc(e.getMessage()))
                    .append("</p>");
            return;
        }
        if (answers.isEmpty()) {
            body.append("<p id=\"answers-none\">None recorded: nobody was asked (not an MCP call, a confirmation"
                    + " token, a replay), or the answers expired with the tool's outcome.</p>");
            return;
        }
        body.append("<table id=\"answers\"><tr><th>when</th><th>who</th><th>answer</th><th>tool</th>"
                + "<th>what was shown</th><th>arguments' digest</th></tr>");
        for (ConfirmationAnswers.Answer a : answers) {
            body.append("<tr><td class=\"t\">").append(at(a.answeredAt())).append("</td><td>")
                    .append(esc(a.principal().isEmpty() ? "(stdio)" : a.principal())).append("</td><td>")
                    .append(esc(a.action())).append(approver(a))
                    .append("</td><td>").append(esc(a.tool())).append("</td><td><pre>")
                    .append(esc(a.shown() == null ? "(not kept)" : a.shown())).append("</pre></td><td><code>")
                    .append(esc(a.argumentDigest())).append("</code></td></tr>");
        }
        body.append("</table>");
        if (missing && scope.isEmpty()) {
            // an MCP call's key is stored under its principal's scope: offer each principal who answered
            body.append("<p id=\"answer-scopes\">The record of an MCP call is kept under its principal's scope:");
            answers.stream().map(ConfirmationAnswers.Answer::principal).distinct().forEach(p -> body
                    .append(" <a href=\"").append(keyLink(request, operation, source.scopeOf(p), key)).append("\">")
                    .append(esc(source.scopeOf(p))).append("</a>"));
            body.append("</p>");
        }
    }

    /** What an answer did; for an approver's approval of a token call, who approved and why. */
    private static String approver(ConfirmationAnswers.Answer a) {
        Object by = a.content().get("approvedBy");
        if (by == null) {
            return a.confirmed() ? ": confirmed, the call ran" : ": not confirmed";
        }
        return " by " + esc(String.valueOf(by)) + " (" + esc(String.valueOf(a.content().get("reason")))
                + "): the call's token runs it once";
    }

    private void forms(HttpServletRequest request, StringBuilder body, String operation, String scope,
            String key) {
        String hidden = Csrf.field(request) + "<input type=\"hidden\" name=\"operation\" value=\"" + esc(operation)
                + "\"><input type=\"hidden\" name=\"key\" value=\"" + esc(key)
                + "\"><input type=\"hidden\" name=\"scope\" value=\"" + esc(scope) + "\">";
        String action = esc(request.getContextPath() + base + "/resolve");
        body.append("<h2>Resolve</h2><p>Nobody knows whether this call's side effect happened. Check the system it"
                + " called, then record what you found; your name and reason go to the audit.</p>");
        body.append("<form id=\"not-executed\" method=\"post\" action=\"").append(action).append("\">").append(hidden)
                .append("<input type=\"hidden\" name=\"outcome\" value=\"not-executed\"><b>Not executed</b>: the"
                        + " record is deleted and the next call runs.<label>Reason <textarea name=\"reason\" rows=\"2\""
                        + " required maxlength=\"1000\"></textarea></label><button type=\"submit\">Resolve as not"
                        + " executed</button></form>");
        body.append("<form id=\"executed\" method=\"post\" action=\"").append(action).append("\">").append(hidden)
                .append("<input type=\"hidden\" name=\"outcome\" value=\"executed\"><b>Executed</b>: every later call"
                        + " with the same arguments replays this result for the operation's ttl.<label>Result (JSON,"
                        + " as the method would have returned it; empty for void)<textarea name=\"result\" rows=\"3\">"
                        + "</textarea></label><label>Reason <textarea name=\"reason\" rows=\"2\" required"
                        + " maxlength=\"1000\"></textarea></label><button type=\"submit\">Resolve as executed"
                        + "</button></form>");
    }

    private static String resolved(IdempotencyAudit.Entry e) {
        String what = switch (e.action()) {
            case RELEASED -> "not executed";
            case RESOLVED_EXECUTED -> "executed";
            default -> e.action().toString().toLowerCase(java.util.Locale.ROOT);
        };
        return "Resolved as " + what + " by " + e.by().actor() + ".";
    }

    @PostMapping("/resolve")
    ResponseEntity<String> resolve(HttpServletRequest request, @RequestParam String operation,
            @RequestParam String key, @RequestParam(defaultValue = "") String scope, @RequestParam String outcome,
            @RequestParam(required = false) @Nullable String result,
            @RequestParam(required = false) @Nullable String reason) {
        ResponseEntity<String> refused = postRefusal(request, "A resolution");
        if (refused != null) {
            return refused;
        }
        IdempotencyResolver.Answer answer = resolver.resolve(actor(request), operation, scope, key, outcome, result,
                reason);
        if (answer.resolved()) {
            UriComponentsBuilder to = UriComponentsBuilder.fromPath(request.getContextPath() + base + "/key")
                    .queryParam("operation", "{o}").queryParam("key", "{k}").queryParam("done", "{d}");
            Map<String, String> values = new LinkedHashMap<>(Map.of("o", operation, "k", key, "d", outcome));
            if (!scope.isEmpty()) {
                to.queryParam("scope", "{s}");
                values.put("s", scope);
            }
            return ResponseEntity.status(303).location(URI.create(to.encode().buildAndExpand(values).toUriString()))
                    .cacheControl(CacheControl.noStore()).build();
        }
        return keyPage(request, answer.status(), operation, scope, key, "<p class=\"banner error\" id=\"problem\">"
                + "Not resolved: " + esc(answer.problem()) + "</p>");
    }

    @GetMapping("/duplicates")
    ResponseEntity<String> duplicates(HttpServletRequest request) {
        ResponseEntity<String> refused = refusal(request);
        if (refused != null) {
            return refused;
        }
        List<DuplicatesReport> reports = duplicates.get();
        StringBuilder body = new StringBuilder();
        if (reports.isEmpty()) {
            body.append("<p>The application has no <code>DuplicateBusinessNumbers</code> bean: no reconciliation"
                    + " check to run (docs/stores.md).</p>");
        }
        for (DuplicatesReport report : reports) {
            body.append("<h2>").append(esc(report.name())).append("</h2>").append(report.html());
        }
        return html(request, 200, "Business numbers written more than once", body.toString());
    }

    /** The principal's name; only called once {@link #refusal} let the request through. */
    private static String actor(HttpServletRequest request) {
        Principal principal = request.getUserPrincipal();
        return principal == null ? "" : principal.getName();
    }

    /** 401 without an authenticated principal, 403 without one of the roles; null when the request may go on. */
    private @Nullable ResponseEntity<String> refusal(HttpServletRequest request) {
        Principal principal = request.getUserPrincipal();
        if (principal == null || principal.getName() == null || principal.getName().isBlank()) {
            return ResponseEntity.status(401).contentType(MediaType.TEXT_PLAIN).cacheControl(CacheControl.noStore())
                    .body("The idempotency console needs an authenticated user: put it behind the application's"
                            + " authentication (docs/operations.md).\n");
        }
        if (!roles.isEmpty() && roles.stream().noneMatch(request::isUserInRole)) {
            return ResponseEntity.status(403).contentType(MediaType.TEXT_PLAIN).cacheControl(CacheControl.noStore())
                    .body(principal.getName() + " has none of the roles idempotency.console.roles names.\n");
        }
        return null;
    }

    /**
     * What {@link #refusal} refuses, and a form posted from another site (its Origin names another, or none):
     * {@code what} (an approval, a resolution) is made only from the console's own page. Null when it may go on.
     */
    private @Nullable ResponseEntity<String> postRefusal(HttpServletRequest request, String what) {
        ResponseEntity<String> refused = refusal(request);
        if (refused != null || Csrf.sameOrigin(request)) {
            return refused;
        }
        return html(request, 403, "Refused", "<p class=\"banner error\">" + what + " must be posted from the"
                + " console's own page (its Origin header names another site, or none).</p>");
    }

    private ResponseEntity<String> html(HttpServletRequest request, int status, String title, String body) {
        return ResponseEntity.status(status).contentType(new MediaType(MediaType.TEXT_HTML, java.nio.charset
                .StandardCharsets.UTF_8)).cacheControl(CacheControl.noStore())
                .header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self';"
                        + " frame-ancestors 'none'")
                .header("X-Frame-Options", "DENY").header("Referrer-Policy", "same-origin")
                .body(Html.page(request.getContextPath() + base, title, body));
    }
}
