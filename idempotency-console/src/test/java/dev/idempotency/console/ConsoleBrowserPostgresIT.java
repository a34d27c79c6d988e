package dev.idempotency.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.IdempotencyAdmin;
import dev.idempotency.IdempotencyOutcomeUnknownException;
import dev.idempotency.jdbc.JdbcDialect;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The console in headless Chromium (Debian's {@code chromium} and {@code chromium-driver}, driven by Selenium)
 * against the application on PostgreSQL: an anonymous visitor is sent to the login page and sees no key; signed in,
 * the operator finds the held key with the attempts that met it, resolves it as not executed with a reason, the backlog empties, the history
 * names the operator, and the retry runs. Screenshots of each step are kept under
 * {@code target/console-screenshots/}.
 *
 * <p>Runs when {@code IDEMPOTENCY_POSTGRES_URL} is set, and then fails (never skips) if PostgreSQL, the browser or
 * its driver is missing. The driver and browser are {@code /usr/bin/chromedriver} and {@code /usr/bin/chromium}
 * unless {@code IDEMPOTENCY_CHROMEDRIVER} and {@code IDEMPOTENCY_CHROMIUM} name others; Selenium Manager never
 * downloads anything.
 */
@EnabledIfEnvironmentVariable(named = "IDEMPOTENCY_POSTGRES_URL", matches = ".+")
class ConsoleBrowserPostgresIT {

    private static final Path SHOTS = Path.of("target", "console-screenshots");
    private static final String KEY = "PAYOUT-2026-0042";

    private final String table = "idem_console_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private ConfigurableApplicationContext app;
    private WebDriver browser;
    private Path profile;

    @BeforeEach
    void start() throws IOException {
        app = ConsoleTestApplication.start("idempotency.console.enabled=true",
                "spring.datasource.url=" + System.getenv("IDEMPOTENCY_POSTGRES_URL"),
                "idempotency.jdbc.initialize-schema=always", "idempotency.jdbc.table-name=" + table);
        profile = Files.createTempDirectory("console-chromium-");
        browser = chromium(profile);
        Files.createDirectories(SHOTS);
    }

    /** Headless Chromium with a fresh profile and nothing that reaches the network on its own. */
    static WebDriver chromium(Path profile) {
        String driver = env("IDEMPOTENCY_CHROMEDRIVER", "/usr/bin/chromedriver");
        String binary = env("IDEMPOTENCY_CHROMIUM", "/usr/bin/chromium");
        ChromeOptions options = new ChromeOptions().setBinary(binary).addArguments("--headless", "--no-sandbox",
                "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--window-size=1100,820",
                "--user-data-dir=" + profile.toAbsolutePath());
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(new File(driver)).usingAnyFreePort().build();
        ChromeDriver chrome = new ChromeDriver(service, options);
        chrome.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(20));
        return chrome;
    }

    private static String env(String name, String otherwise) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? otherwise : value;
    }

    @AfterEach
    void stop() throws IOException {
        try {
            if (browser != null) {
                browser.quit();
            }
        } finally {
            if (app != null) {
                DataSource dataSource = app.getBean(DataSource.class);
                JdbcDialect.of(dataSource).dropStatements(table).forEach(new JdbcTemplate(dataSource)::execute);
                app.close();
            }
            if (profile != null) {
                try (var files = Files.walk(profile)) {
                    files.sorted(java.util.Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
                }
            }
        }
    }

    /**
     * Clicks what {@code by} finds and waits until the browser has left the page it was on: a click returns before a
     * form's answer is loaded on a busy machine, and the next assertion would read the old page.
     */
    private void clickToNewPage(By by) {
        WebElement old = browser.findElement(By.tagName("html"));
        browser.findElement(by).click();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            try {
                old.isDisplayed();
            } catch (StaleElementReferenceException left) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("clicking " + by + " did not load another page within 30 s; still on "
                        + browser.getCurrentUrl());
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for the page after clicking " + by, e);
            }
        }
    }

    private void screenshot(String name) throws IOException {
        File shot = ((ChromeDriver) browser).getScreenshotAs(OutputType.FILE);
        Files.copy(shot.toPath(), SHOTS.resolve(name), StandardCopyOption.REPLACE_EXISTING);
    }

    @Test
    void anOperatorResolvesAHeldKeyAndTheRetryRuns() throws IOException {
        ConsoleTestApplication.Payouts payouts = app.getBean(ConsoleTestApplication.Payouts.class);
        payouts.failNext();
        assertThatThrownBy(() -> payouts.send(KEY)).isInstanceOf(IllegalStateException.class);
        // the caller retries twice before anyone looks: both refused, both recorded beside the key
        for (int i = 0; i < 2; i++) {
            assertThatThrownBy(() -> payouts.send(KEY)).isInstanceOf(IdempotencyOutcomeUnknownException.class);
        }
        String base = "http://localhost:" + ((WebServerApplicationContext) app).getWebServer().getPort();

        // anonymous: sent to the login page, no key in sight
        browser.get(base + "/idempotency/");
        assertThat(browser.getCurrentUrl()).endsWith("/login");
        assertThat(browser.getPageSource()).doesNotContain(KEY).doesNotContain("Payouts.send");
        screenshot("01-login.png");

        browser.findElement(By.name("username")).sendKeys("alice");
        browser.findElement(By.name("password")).sendKeys(ConsoleTestApplication.PASSWORD);
        clickToNewPage(By.cssSelector("button[type=submit]"));
        assertThat(browser.getCurrentUrl()).startsWith(base + "/idempotency/");
        assertThat(browser.findElement(By.id("backlog")).getText()).contains("Payouts.send");
        assertThat(browser.findElement(By.id("needs-review")).getText()).contains(KEY).contains("IRREVERSIBLE");
        screenshot("02-overview.png");

        clickToNewPage(By.linkText(KEY));
        assertThat(browser.findElement(By.id("status")).getText()).isEqualTo("NEEDS_REVIEW");
        List<String> attempts = browser.findElements(By.cssSelector("#attempts tr td:nth-child(2)")).stream()
                .map(WebElement::getText).toList();
        assertThat(attempts).containsExactly("claimed the key", "held for review",
                "refused: outcome unknown, held for review", "refused: outcome unknown, held for review");
        assertThat(browser.findElement(By.id("attempts")).getText())
                .contains("it ended with java.lang.IllegalStateException: the payout gateway timed out");
        // the whole page in one picture: the record, its attempts and the resolutions (then the history)
        browser.manage().window().setSize(new Dimension(1100, 1500));
        browser.findElement(By.cssSelector("#not-executed textarea[name=reason]"))
                .sendKeys("gateway statement of 2026-12-05 shows no payout " + KEY);
        screenshot("03-key.png");
        clickToNewPage(By.cssSelector("#not-executed button[type=submit]"));

        assertThat(browser.findElement(By.id("done")).getText()).isEqualTo("Resolved as not executed by alice.");
        assertThat(browser.findElement(By.id("status")).getText()).startsWith("no record");
        assertThat(browser.findElement(By.className("history")).getText()).contains("alice").contains("RELEASED")
                .contains("gateway statement of 2026-12-05 shows no payout");
        screenshot("04-resolved.png");
        browser.manage().window().setSize(new Dimension(1100, 820));

        browser.get(base + "/idempotency/");
        assertThat(browser.findElement(By.id("backlog-empty")).getText()).isEqualTo("Nothing waits for an operator.");
        assertThat(browser.findElement(By.id("needs-review-empty")).isDisplayed()).isTrue();
        assertThat(app.getBean(IdempotencyAdmin.class).backlog()).isEmpty();

        // resolved as not executed: the retry runs the payout
        assertThat(payouts.send(KEY)).isEqualTo("payout " + KEY + " #1");
    }
}
