package dev.idempotency.web;

import dev.idempotency.Tier;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.net.URI;
import java.security.Principal;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** The server of the tests: an order service on a real embedded Tomcat (the nested controller is its member). */
@SpringBootConfiguration
@EnableAutoConfiguration
class OrderApp {

    /** A stand-in for Spring Security: the X-User header becomes the request's principal. */
    @Bean
    Filter principalFromHeader() {
        return (request, response, chain) -> {
            HttpServletRequest http = (HttpServletRequest) request;
            String user = http.getHeader("X-User");
            chain.doFilter(user == null ? request : new HttpServletRequestWrapper(http) {
                @Override
                public Principal getUserPrincipal() {
                    return () -> user;
                }
            }, response);
        };
    }

    record OrderRequest(String item, int quantity) {
    }

    /** Every key that arrives, replayed or not: what the caller side's tests assert at the server. */
    @Bean
    Filter keysArrived(Probe probe) {
        return (request, response, chain) -> {
            String key = ((HttpServletRequest) request).getHeader("Idempotency-Key");
            if (key != null) {
                probe.keysArrived.add(key);
            }
            chain.doFilter(request, response);
        };
    }

    /** What the tests set and read: kept out of the controller, whose @Transactional proxy hides its fields. */
    static final class Probe {
        final JdbcTemplate jdbc;
        final String table = "orders_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        final AtomicInteger executions = new AtomicInteger();
        final List<String> keysSeen = new java.util.concurrent.CopyOnWriteArrayList<>();
        final List<String> keysArrived = new java.util.concurrent.CopyOnWriteArrayList<>();
        volatile CountDownLatch entered = new CountDownLatch(1);
        volatile CountDownLatch release = new CountDownLatch(0);
        volatile int status = 201;

        Probe(JdbcTemplate jdbc) {
            this.jdbc = jdbc;
            jdbc.execute("create table " + table + " (id varchar(64) primary key, item varchar(64))");
        }

        int count() {
            Integer n = jdbc.queryForObject("select count(*) from " + table, Integer.class);
            return n == null ? 0 : n;
        }
    }

    @Bean
    Probe probe(JdbcTemplate jdbc) {
        return new Probe(jdbc);
    }

    /** A service the controller calls, idempotent in its own right (@Idempotent, on a key of its own). */
    @org.springframework.stereotype.Service
    static class Stock {
        @dev.idempotency.Idempotent(key = "#sku", tier = Tier.REVERSIBLE)
        public String reserve(String sku) {
            return "reserved " + sku + " " + UUID.randomUUID();
        }
    }

    @RestController
    static class Orders {
        private final Probe probe;
        private final JdbcTemplate jdbc;
        private final DataSource dataSource;

        private final Stock stock;

        Orders(Probe probe, JdbcTemplate jdbc, DataSource dataSource, Stock stock) {
            this.stock = stock;
            this.probe = probe;
            this.jdbc = jdbc;
            this.dataSource = dataSource;
        }

        @PostMapping("/orders")
        @IdempotentRequest(tier = Tier.REVERSIBLE, parameters = "currency", lockTimeout = "200ms")
        @Transactional
        public ResponseEntity<Map<String, Object>> create(@RequestBody OrderRequest order,
                @RequestParam(required = false) String currency, HttpServletRequest request) throws Exception {
            probe.executions.incrementAndGet();
            probe.keysSeen.add(String.valueOf(request.getHeader("Idempotency-Key")));
            probe.entered.countDown();
            if (!probe.release.await(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("never released");
            }
            String id = UUID.randomUUID().toString();
            jdbc.update("insert into " + probe.table + " values (?, ?)", id, order.item());
            return ResponseEntity.status(probe.status).location(URI.create("/orders/" + id))
                    .header("X-Not-Replayed", id)
                    .body(Map.of("id", id, "item", order.item(), "quantity", order.quantity()));
        }

        /** Reports whether the key's claim is in this method's transaction: seen here, not from another connection. */
        @PostMapping("/claims")
        @IdempotentRequest(tier = Tier.REVERSIBLE)
        @Transactional
        public Map<String, Object> claims(@RequestBody Map<String, String> body) throws Exception {
            probe.executions.incrementAndGet();
            String sql = "select count(*) from " + body.get("table") + " where idem_key like ?";
            String pattern = "%:" + body.get("key");
            Integer inside = jdbc.queryForObject(sql, Integer.class, pattern);
            int outside;
            try (var connection = dataSource.getConnection(); var statement = connection.prepareStatement(sql)) {
                statement.setString(1, pattern);
                try (var rows = statement.executeQuery()) {
                    rows.next();
                    outside = rows.getInt(1);
                }
            }
            return Map.of("inside", inside, "outside", outside);
        }

        /** A gateway that forwards its caller's key to /orders (idempotency.web.propagate-inbound-key). */
        @PostMapping("/gateway")
        public Map<String, Object> forward(@RequestBody OrderRequest order, HttpServletRequest request) {
            org.springframework.web.client.RestClient client = org.springframework.web.client.RestClient.builder()
                    .baseUrl("http://127.0.0.1:" + request.getLocalPort())
                    .requestInterceptor(IdempotencyKeyInterceptor.create())
                    .build();
            @SuppressWarnings("unchecked")
            Map<String, Object> created = client.post().uri("/orders").body(order).retrieve().body(Map.class);
            return created;
        }

        @PostMapping("/uploads")
        @IdempotentRequest(tier = Tier.REVERSIBLE)
        public Map<String, Object> upload(@org.springframework.web.bind.annotation.RequestPart("file")
                org.springframework.web.multipart.MultipartFile file) throws java.io.IOException {
            return Map.of("n", probe.executions.incrementAndGet(), "size", file.getBytes().length);
        }

        @PostMapping("/reservations")
        @IdempotentRequest(tier = Tier.REVERSIBLE)
        public Map<String, Object> reserve(@RequestBody Map<String, String> body) {
            probe.executions.incrementAndGet();
            return Map.of("reservation", stock.reserve(body.get("sku")));
        }

        /** Echoes a JSON body bound as a map: a price, an amount (the body's numbers as the application reads them). */
        @PostMapping("/quotes")
        @IdempotentRequest(tier = Tier.REVERSIBLE)
        public Map<String, Object> quote(@RequestBody Map<String, Object> body) {
            return Map.of("n", probe.executions.incrementAndGet(), "quoted", body);
        }

        /** An order placed from an HTML form (application/x-www-form-urlencoded). */
        @PostMapping(path = "/form-orders", consumes = "application/x-www-form-urlencoded")
        @IdempotentRequest(tier = Tier.REVERSIBLE)
        public Map<String, Object> formOrder(@RequestParam String item, @RequestParam(required = false) String note) {
            return Map.of("n", probe.executions.incrementAndGet(), "item", item,
                    "note", String.valueOf(note == null ? 0 : note.length()));
        }

        /** Writes an order, then answers {@code size} bytes: a response larger than what is recorded. */
        @PostMapping("/exports")
        @IdempotentRequest(tier = Tier.REVERSIBLE)
        @Transactional
        public ResponseEntity<byte[]> export(@RequestParam int size) {
            probe.executions.incrementAndGet();
            jdbc.update("insert into " + probe.table + " values (?, ?)", UUID.randomUUID().toString(), "export");
            return ResponseEntity.ok().contentType(org.springframework.http.MediaType.APPLICATION_OCTET_STREAM)
                    .body(new byte[size]);
        }

        @PostMapping("/optional")
        @IdempotentRequest(tier = Tier.REVERSIBLE, required = false)
        public Map<String, Object> optional() {
            return Map.of("n", probe.executions.incrementAndGet());
        }
    }
}
