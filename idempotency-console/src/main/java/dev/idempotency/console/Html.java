package dev.idempotency.console;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.web.util.HtmlUtils;
import org.springframework.web.util.UriComponentsBuilder;

/**
 * The console's HTML: every value written into a page goes through {@link #esc}; links through {@link #link}. No
 * template engine: the pages are a few tables and two forms.
 */
final class Html {

    private static final String STYLE = """
            body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
            header{background:#1d2330;color:#fff;padding:10px 24px}header a{color:#fff;margin-right:18px}
            main{padding:16px 24px;max-width:1100px}h1{font-size:20px}h2{font-size:16px;margin-top:26px}
            table{border-collapse:collapse;background:#fff;width:100%}th,td{border:1px solid #d8dce3;padding:5px 8px;
            text-align:left;vertical-align:top}th{background:#eceff3}td.n{text-align:right}
            .tiles{display:flex;gap:12px}
            .tile{background:#fff;border:1px solid #d8dce3;padding:10px 16px;min-width:150px}
            .tile b{display:block;font-size:24px}.warn b{color:#b3261e}.ok b{color:#1b7f3b}
            .banner{padding:8px 12px;margin:10px 0;border:1px solid}.error{background:#fdecea;border-color:#b3261e}
            .done{background:#e8f5ec;border-color:#1b7f3b}form{background:#fff;border:1px solid #d8dce3;padding:10px;
            margin:10px 0}textarea{width:100%;box-sizing:border-box}label{display:block;margin-top:6px}
            button{margin-top:8px;padding:5px 12px}code{background:#eceff3;padding:0 3px}
            pre{margin:0;white-space:pre-wrap;font-size:12px}.note{color:#5a6270;font-size:12px}td.t{white-space:nowrap}
            """;

    private Html() {
    }

    /** {@code value} escaped for HTML text and attribute values; null as the empty string. */
    static String esc(@Nullable Object value) {
        return value == null ? "" : HtmlUtils.htmlEscape(String.valueOf(value), "UTF-8");
    }

    /** An escaped {@code href} to {@code path} with its query parameters encoded. */
    static String link(String path, Map<String, String> query) {
        UriComponentsBuilder uri = UriComponentsBuilder.fromPath(path);
        query.forEach((name, value) -> uri.queryParam(name, "{" + name + "}"));
        return esc(uri.encode().buildAndExpand(query).toUriString());
    }

    /** An instant to the second, or "-". */
    static String at(@Nullable Instant instant) {
        return instant == null ? "-" : esc(instant.truncatedTo(ChronoUnit.SECONDS));
    }

    /** A duration as days, hours, minutes and seconds ("2h 5m"); "-" for null. */
    static String age(@Nullable Duration d) {
        if (d == null) {
            return "-";
        }
        long s = Math.max(0, d.getSeconds());
        if (s < 60) {
            return s + "s";
        }
        StringBuilder out = new StringBuilder();
        long days = s / 86_400;
        long hours = s % 86_400 / 3600;
        long minutes = s % 3600 / 60;
        if (days > 0) {
            out.append(days).append("d ");
        }
        if (days > 0 || hours > 0) {
            out.append(hours).append("h ");
        }
        return out.append(minutes).append('m').toString();
    }

    /** A whole page: {@code body} is HTML already escaped. */
    static String page(String base, String title, String body) {
        return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + esc(title)
                + " · idempotency console</title><style>" + STYLE + "</style></head><body><header><a href=\""
                + esc(base + "/") + "\"><b>idempotency console</b></a><a href=\"" + esc(base + "/duplicates")
                + "\">duplicate business numbers</a></header><main><h1>" + esc(title) + "</h1>\n" + body
                + "\n</main></body></html>\n";
    }
}
