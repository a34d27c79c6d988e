package dev.idempotency.console;

import static dev.idempotency.console.Html.at;
import static dev.idempotency.console.Html.esc;

import dev.idempotency.jdbc.DuplicateBusinessNumbers;
import java.util.List;
import org.springframework.beans.factory.ListableBeanFactory;

/** The reconciliation checks of the application ({@link DuplicateBusinessNumbers} beans), run when asked for. */
final class JdbcDuplicates {

    private JdbcDuplicates() {
    }

    static List<ConsoleController.DuplicatesReport> of(ListableBeanFactory beans) {
        return beans.getBeansOfType(DuplicateBusinessNumbers.class).values().stream()
                .map(JdbcDuplicates::report).toList();
    }

    private static ConsoleController.DuplicatesReport report(DuplicateBusinessNumbers check) {
        return new ConsoleController.DuplicatesReport() {
            @Override
            public String name() {
                return check.toString();
            }

            @Override
            public String html() {
                DuplicateBusinessNumbers.Report r;
                try {
                    r = check.check();
                } catch (RuntimeException e) {
                    return "<p class=\"banner error\">The check failed: " + esc(e.getMessage()) + "</p>";
                }
                StringBuilder out = new StringBuilder("<p><code>").append(esc(r.table() + "." + r.numberColumn()))
                        .append("</code>, from ").append(at(r.from())).append(" to ").append(at(r.to()))
                        .append(": <b>").append(r.duplicatedNumbers()).append("</b> written more than once.</p>");
                if (!r.duplicates().isEmpty()) {
                    out.append("<table><tr><th>business number</th><th>rows</th><th>first</th><th>last</th></tr>");
                    for (DuplicateBusinessNumbers.Duplicate d : r.duplicates()) {
                        out.append("<tr><td>").append(esc(d.businessNumber())).append("</td><td class=\"n\">")
                                .append(d.rows()).append("</td><td>").append(at(d.first())).append("</td><td>")
                                .append(at(d.last())).append("</td></tr>");
                    }
                    out.append("</table>");
                }
                return out.toString();
            }
        };
    }
}
