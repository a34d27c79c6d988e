package dev.idempotency.sample.messaging;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.IdempotencyEvent;
import dev.idempotency.IdempotencyListener;
import dev.idempotency.jdbc.JdbcDialect;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import javax.sql.DataSource;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.core.MessagePostProcessor;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.io.ClassPathResource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;

/**
 * At-least-once delivery, made exactly-once in effect: a publisher sends every order twice (a resend after a lost
 * confirm), a consumer ships orders behind {@code IdempotentListenerAdvice}, is killed mid-stream (its connection
 * drops with messages unacknowledged, so the broker delivers them again) and a new consumer takes over. It prints
 * {@code messages delivered: N, effects: M}, where M is the number of distinct orders.
 *
 * <p>RabbitMQ at {@code IDEMPOTENCY_RABBITMQ_URL}, or {@code amqp://guest:guest@127.0.0.1:5672}; the database is an
 * embedded H2. The queue has a name of its own and is deleted at the end.
 */
public final class MessagingSample {

    static final String URL = "IDEMPOTENCY_RABBITMQ_URL";
    static final int ORDERS = 100;

    private MessagingSample() {
    }

    public static void main(String[] args) {
        Result result = run(System.out);
        System.exit(result.effects() == result.distinct() ? 0 : 1);
    }

    /** What the run counted. */
    record Result(int delivered, int redelivered, int effects, int distinct) {
    }

    /** Counts what the broker hands the listener containers, before the advice sees it. */
    static final class Deliveries implements MessagePostProcessor {
        final AtomicInteger delivered = new AtomicInteger();
        final AtomicInteger redelivered = new AtomicInteger();

        @Override
        public Message postProcessMessage(Message message) {
            delivered.incrementAndGet();
            if (Boolean.TRUE.equals(message.getMessageProperties().isRedelivered())) {
                redelivered.incrementAndGet();
            }
            return message;
        }
    }

    static Result run(PrintStream out) {
        String url = System.getenv().getOrDefault(URL, "amqp://guest:guest@127.0.0.1:5672");
        String queue = "messaging-sample-" + UUID.randomUUID().toString().substring(0, 8);
        HikariDataSource database = database();
        CachingConnectionFactory publisherConnection = new CachingConnectionFactory(URI.create(url));
        RabbitAdmin admin = new RabbitAdmin(publisherConnection);
        Deliveries deliveries = new Deliveries();
        // what the engine decided for each delivery: ran, or acknowledged as done
        AtomicInteger settled = new AtomicInteger();
        IdempotencyListener outcomes = event -> {
            if (event.outcome() == IdempotencyEvent.Outcome.EXECUTED
                    || event.outcome() == IdempotencyEvent.Outcome.REPLAYED) {
                settled.incrementAndGet();
            }
        };
        JdbcTemplate jdbc = new JdbcTemplate(database);
        try {
            admin.declareQueue(QueueBuilder.nonDurable(queue).build());
            RabbitTemplate publisher = new RabbitTemplate(publisherConnection);
            out.println("consumer 1 started on queue " + queue);
            Consumer first = new Consumer(url, database, queue, deliveries, outcomes);
            for (int i = 0; i < ORDERS; i++) {
                // the publisher's resend: the same message id, as after a confirm that never came back
                publish(publisher, queue, "order-" + i);
                publish(publisher, queue, "order-" + i);
            }
            out.println("published " + ORDERS + " orders, each twice");
            waitUntil(() -> shipped(jdbc) >= ORDERS / 3);
            first.kill();
            out.println("consumer 1 killed mid-stream after " + shipped(jdbc) + " shipments; consumer 2 started");
            Consumer second = new Consumer(url, database, queue, deliveries, outcomes);
            waitUntil(() -> settled.get() >= 2 * ORDERS && admin.getQueueInfo(queue).getMessageCount() == 0);
            second.stop();
            int effects = shipped(jdbc);
            int distinct = jdbc.queryForObject("SELECT COUNT(DISTINCT order_no) FROM shipments", Integer.class);
            out.println("redelivered by the broker (the kill): " + deliveries.redelivered.get());
            out.println("distinct messages: " + distinct);
            out.println("messages delivered: " + deliveries.delivered.get() + ", effects: " + effects);
            return new Result(deliveries.delivered.get(), deliveries.redelivered.get(), effects, distinct);
        } finally {
            admin.deleteQueue(queue);
            publisherConnection.destroy();
            database.close();
        }
    }

    private static void publish(RabbitTemplate publisher, String queue, String orderNo) {
        publisher.send("", queue, MessageBuilder.withBody(orderNo.getBytes(StandardCharsets.UTF_8))
                .setContentType("text/plain").setMessageId(orderNo).build());
    }

    private static int shipped(JdbcTemplate jdbc) {
        return jdbc.queryForObject("SELECT COUNT(*) FROM shipments", Integer.class);
    }

    private static HikariDataSource database() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl("jdbc:h2:mem:messaging-sample-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        config.setMaximumPoolSize(16);
        HikariDataSource dataSource = new HikariDataSource(config);
        new ResourceDatabasePopulator(new ClassPathResource(JdbcDialect.h2().schemaLocation())).execute(dataSource);
        new JdbcTemplate(dataSource).execute("CREATE TABLE shipments (order_no VARCHAR(64) NOT NULL)");
        return dataSource;
    }

    private static void waitUntil(BooleanSupplier condition) {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the sample did not finish within a minute");
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    /** One consumer process: a Spring context of its own, with its own connection to the broker. */
    private static final class Consumer {
        private final CachingConnectionFactory connection;
        private final AnnotationConfigApplicationContext context;

        Consumer(String url, DataSource database, String queue, Deliveries deliveries, IdempotencyListener outcomes) {
            this.connection = new CachingConnectionFactory(URI.create(url));
            this.context = new AnnotationConfigApplicationContext();
            context.getEnvironment().getPropertySources()
                    .addFirst(new MapPropertySource("sample", Map.of("sample.queue", queue)));
            // the database outlives the consumer: its context must not close it
            context.registerBean(DataSource.class, () -> database, bd -> bd.setDestroyMethodName(""));
            context.registerBean(ConnectionFactory.class, () -> connection);
            context.registerBean(IdempotencyListener.class, () -> outcomes);
            context.registerBean(Deliveries.class, () -> deliveries);
            context.register(ConsumerConfiguration.class);
            context.refresh();
        }

        /**
         * What the broker sees of a killed process: the connection drops with deliveries unacknowledged, and the
         * broker requeues them. (The listener threads here may still commit what they were doing; their acks then
         * go nowhere, as after a crash between the commit and the ack.)
         */
        void kill() {
            connection.resetConnection();
            context.close();
            connection.destroy();
        }

        void stop() {
            context.close();
            connection.destroy();
        }
    }
}
