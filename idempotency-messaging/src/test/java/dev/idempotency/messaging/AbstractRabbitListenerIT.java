package dev.idempotency.messaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.aopalliance.intercept.MethodInterceptor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.ImmediateRequeueAmqpException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.core.MessageListener;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;

/**
 * {@link IdempotentListenerAdvice} on a real RabbitMQ ({@value #URL}): each test declares a queue and its dead-letter
 * queue of its own (deleted afterwards), and a listener whose every run writes one row in the database's effects
 * table, in the transaction the advice opens. Where the variable is set, an unreachable broker fails the suite.
 */
abstract class AbstractRabbitListenerIT {

    static final String URL = "IDEMPOTENCY_RABBITMQ_URL";

    private static CachingConnectionFactory connections;
    private static RabbitAdmin admin;
    private static RabbitTemplate rabbit;

    private Database db;
    private String queue;
    private String deadLetters;
    private SimpleMessageListenerContainer container;
    /** Every delivery that reached the container, by message id (or body, without one). */
    private final List<String> deliveries = new CopyOnWriteArrayList<>();
    /** Deliveries the advice sent back to the queue as in flight. */
    private final AtomicInteger requeued = new AtomicInteger();
    /** What the advice rejected without requeue (to the dead-letter queue). */
    private final List<Throwable> rejections = new CopyOnWriteArrayList<>();
    /** Deliveries inside the advice chain now. */
    private final AtomicInteger handling = new AtomicInteger();
    /** Message ids whose first delivery is "lost" after it ran: requeued as a consumer killed before its ack is. */
    private final Set<String> loseFirstAck = ConcurrentHashMap.newKeySet();
    private final Set<String> redelivered = ConcurrentHashMap.newKeySet();

    abstract Database database();

    @BeforeAll
    static void connect() {
        connections = new CachingConnectionFactory(URI.create(System.getenv(URL)));
        admin = new RabbitAdmin(connections);
        rabbit = new RabbitTemplate(connections);
    }

    @AfterAll
    static void disconnect() {
        connections.destroy();
    }

    @BeforeEach
    void declare() {
        db = database();
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        queue = "idem-test-" + suffix;
        deadLetters = queue + ".dlq";
        admin.declareQueue(QueueBuilder.nonDurable(deadLetters).build());
        admin.declareQueue(QueueBuilder.nonDurable(queue).deadLetterExchange("").deadLetterRoutingKey(deadLetters)
                .build());
    }

    @AfterEach
    void delete() {
        if (container != null) {
            container.stop();
        }
        admin.deleteQueue(queue);
        admin.deleteQueue(deadLetters);
        db.close();
    }

    @Test
    void everyMessagePublishedTwiceRunsOnce() {
        start(b -> b, 4, this::effect);
        for (int i = 0; i < 50; i++) {
            publish("order-" + i, "m-" + i);
            publish("order-" + i, "m-" + i);
        }
        awaitDrained(100);
        assertThat(db.effects()).isEqualTo(50);
        assertThat(db.distinctEffects()).isEqualTo(50);
    }

    @Test
    void manyConcurrentDuplicatesHaveOneEffect() {
        start(b -> b, 8, m -> {
            effect(m);
            pause(50);
        });
        for (int i = 0; i < 40; i++) {
            publish("order-1", "one-id");
        }
        awaitDrained(40);
        assertThat(db.effects()).isEqualTo(1);
    }

    @Test
    void aMessageRedeliveredAfterItsAckWasLostIsAckedWithoutRunning() {
        AtomicInteger runs = new AtomicInteger();
        start(b -> b, 2, m -> {
            runs.incrementAndGet();
            effect(m);
        });
        for (int i = 0; i < 10; i++) {
            loseFirstAck.add("m-" + i);
            publish("order-" + i, "m-" + i);
        }
        awaitDrained(20);
        assertThat(runs).hasValue(10);
        assertThat(db.effects()).isEqualTo(10);
        assertThat(redelivered).as("the second deliveries came back as redeliveries").hasSize(10);
    }

    @Test
    void aDuplicateOfAMessageStillRunningIsRequeuedNotRun() throws InterruptedException {
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger runs = new AtomicInteger();
        start(b -> b.lockTimeout(Duration.ofMillis(200)), 2, m -> {
            runs.incrementAndGet();
            effect(m);
            running.countDown();
            waitFor(release);
        });
        publish("order-1", "slow");
        assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
        publish("order-1", "slow");
        await().atMost(Duration.ofSeconds(20)).until(() -> requeued.get() >= 2);
        assertThat(runs).as("the duplicate did not run while the first was in flight").hasValue(1);
        release.countDown();
        await().atMost(Duration.ofSeconds(20)).until(() -> messageCount(queue) == 0 && db.keys() == 1
                && deliveries.size() >= 2 + requeued.get());
        assertThat(runs).hasValue(1);
        assertThat(db.effects()).isEqualTo(1);
        assertThat(rabbit.receive(deadLetters, 200)).as("nothing was dead-lettered").isNull();
    }

    @Test
    void aPoisonMessageReachesTheDeadLetterQueueAsWithoutTheGuard() {
        start(b -> b, 2, m -> {
            if (body(m).equals("poison")) {
                effect(m);
                throw new IllegalStateException("cannot process " + body(m));
            }
            effect(m);
        });
        publish("poison", "p-1");
        publish("order-1", "m-1");
        Message dead = rabbit.receive(deadLetters, 10_000);
        assertThat(dead).isNotNull();
        assertThat(body(dead)).isEqualTo("poison");
        assertThat(dead.getMessageProperties().getMessageId()).isEqualTo("p-1");
        assertThat(dead.getMessageProperties().getHeaders()).containsKey("x-death");
        awaitDrained(2);
        assertThat(db.effects()).as("the poison message's write rolled back with its claim").isEqualTo(1);
        assertThat(db.keys()).as("only the good message is recorded: a replayed DLQ message runs").isEqualTo(1);
    }

    @Test
    void aMessageWithoutIdIsRejectedToTheDeadLetterQueueWithoutRunning() {
        start(b -> b, 1, this::effect);
        rabbit.send("", queue, MessageBuilder.withBody("no id".getBytes(StandardCharsets.UTF_8)).build());
        Message dead = rabbit.receive(deadLetters, 10_000);
        assertThat(dead).isNotNull();
        assertThat(body(dead)).isEqualTo("no id");
        assertThat(db.effects()).isZero();
        assertThat(db.keys()).isZero();
    }

    @Test
    void aBusinessKeyFromThePayloadMakesTwoMessagesOfOneOrderOneEffect() {
        // the resend differs in sentAt only, which the fingerprint leaves out
        start(b -> b.key("#payload['orderNo']").fingerprint("#payload['amount']"), 2, this::effect);
        publishJson("{\"orderNo\":\"A-1\",\"amount\":12.50,\"sentAt\":1}", "first");
        publishJson("{\"orderNo\":\"A-1\",\"amount\":12.50,\"sentAt\":2}", "resent-with-a-new-id");
        publishJson("{\"orderNo\":\"A-2\",\"amount\":3,\"sentAt\":3}", "other");
        awaitDrained(3);
        assertThat(db.effects()).isEqualTo(2);
        assertThat(rabbit.receive(deadLetters, 200)).as("nothing was dead-lettered").isNull();
    }

    @Test
    void aSecondMessageWithTheSameIdAndAnotherBodyIsDeadLetteredWithTheReasonNotRun() {
        start(b -> b, 1, this::effect);
        publish("order-1: 10 EUR", "m-1");
        awaitDrained(1);
        publish("order-1: 1000 EUR", "m-1");
        Message dead = rabbit.receive(deadLetters, 10_000);
        assertThat(dead).as("the second message was dead-lettered, not acked as done").isNotNull();
        assertThat(body(dead)).isEqualTo("order-1: 1000 EUR");
        awaitDrained(2);
        assertThat(db.effects()).isEqualTo(1);
        assertThat(db.distinctEffects()).isEqualTo(1);
        assertThat(rejections).singleElement().satisfies(e -> assertThat(e.getMessage())
                .contains("listener 'orders-" + queue + "'")
                .contains("has key '" + queue + "/m-1', which a message with another payload (its body, or a header"
                        + " the key reads) already used: it is not run, and not acknowledged as processed;"
                        + " rejected without requeue")
                .doesNotContain("1000 EUR"));
    }

    @Test
    void aHeaderTheKeyReadsIsPartOfThePayloadAndOneItDoesNotReadIsNot() {
        start(b -> b.key("#headers['order']"), 1, this::effect);
        publishWithHeaders("same body", "m-1", java.util.Map.of("order", "A-1", "trace", "t-1"));
        publishWithHeaders("same body", "m-2", java.util.Map.of("order", "A-1", "trace", "t-2"));
        awaitDrained(2);
        assertThat(db.effects()).as("a header the key does not read (a trace id) is not fingerprinted")
                .isEqualTo(1);
        assertThat(rabbit.receive(deadLetters, 200)).isNull();
    }

    @Test
    void twoTenantsWithOneMessageIdAreTwoEffectsAndTheirScopesCannotMeetInTheKey() {
        start(b -> b.key("#messageId").scope("#headers['tenant']"), 1, this::effect);
        publishWithHeaders("t1's order", "m-1", java.util.Map.of("tenant", "t1"));
        publishWithHeaders("t2's order", "m-1", java.util.Map.of("tenant", "t2"));
        // joined into one text these two would be one key: t1 + ':' + x:y = t1:x + ':' + y
        publishWithHeaders("t1's x:y", "x:y", java.util.Map.of("tenant", "t1"));
        publishWithHeaders("t1:x's y", "y", java.util.Map.of("tenant", "t1:x"));
        publishWithHeaders("t1's order", "m-1", java.util.Map.of("tenant", "t1"));
        awaitDrained(5);
        assertThat(db.effects()).as("four messages of four (tenant, id) pairs; t1's m-1 again replayed")
                .isEqualTo(4);
        assertThat(rabbit.receive(deadLetters, 200)).isNull();
    }

    @Test
    void aMessageWithoutItsTenantHeaderIsRejectedNotRunInNoScope() {
        start(b -> b.key("#messageId").scope("#headers['tenant']"), 1, this::effect);
        publish("no tenant", "m-1");
        Message dead = rabbit.receive(deadLetters, 10_000);
        assertThat(dead).isNotNull();
        assertThat(db.effects()).isZero();
        assertThat(rejections).singleElement().satisfies(e -> assertThat(e.getMessage())
                .contains("scope \"#headers['tenant']\"").contains("#headers['tenant'], which is null"));
    }

    @Test
    void aKeyExpressionThatReadsAMissingHeaderRejectsTheMessage() {
        start(b -> b.key("#headers['orderNo']"), 1, this::effect);
        publish("order-1", "m-1");
        Message dead = rabbit.receive(deadLetters, 10_000);
        assertThat(dead).isNotNull();
        assertThat(db.effects()).isZero();
    }

    private void start(UnaryOperator<IdempotentListenerAdvice.Builder> settings, int consumers,
            MessageListener listener) {
        IdempotentListenerAdvice advice = settings.apply(IdempotentListenerAdvice.rabbit(db.executor, "orders-" + queue)
                .transactionManager(db.transactions)).build();
        // outside the advice: counts deliveries, and plays a consumer killed after the work but before its ack
        MethodInterceptor broker = invocation -> {
            Message m = (Message) invocation.getArguments()[1];
            String id = m.getMessageProperties().getMessageId();
            deliveries.add(id != null ? id : body(m));
            if (Boolean.TRUE.equals(m.getMessageProperties().isRedelivered()) && id != null) {
                redelivered.add(id);
            }
            handling.incrementAndGet();
            try {
                Object result = invocation.proceed();
                if (id != null && loseFirstAck.remove(id)) {
                    throw new ImmediateRequeueAmqpException("the ack of " + id + " was lost");
                }
                return result;
            } catch (ImmediateRequeueAmqpException e) {
                if (e.getCause() instanceof dev.idempotency.IdempotencyInProgressException) {
                    requeued.incrementAndGet();
                }
                throw e;
            } catch (org.springframework.amqp.AmqpRejectAndDontRequeueException e) {
                rejections.add(e);
                throw e;
            } finally {
                handling.decrementAndGet();
            }
        };
        container = new SimpleMessageListenerContainer(connections);
        container.setQueueNames(queue);
        container.setConcurrentConsumers(consumers);
        container.setPrefetchCount(1);
        container.setDefaultRequeueRejected(false);
        container.setAdviceChain(broker, advice);
        container.setMessageListener(listener);
        container.start();
    }

    private void effect(Message m) {
        db.effect(body(m));
    }

    private void publish(String body, String id) {
        rabbit.send("", queue, MessageBuilder.withBody(body.getBytes(StandardCharsets.UTF_8)).setMessageId(id).build());
    }

    private void publishWithHeaders(String body, String id, java.util.Map<String, String> headers) {
        var m = MessageBuilder.withBody(body.getBytes(StandardCharsets.UTF_8)).setMessageId(id);
        headers.forEach(m::setHeader);
        rabbit.send("", queue, m.build());
    }

    private void publishJson(String body, String id) {
        rabbit.send("", queue, MessageBuilder.withBody(body.getBytes(StandardCharsets.UTF_8)).setMessageId(id)
                .setContentType("application/json").build());
    }

    /** Waits until at least that many deliveries reached the container, none is ready and none is being handled. */
    private void awaitDrained(int deliveredAtLeast) {
        await().atMost(Duration.ofSeconds(30)).until(() -> deliveries.size() >= deliveredAtLeast
                && messageCount(queue) == 0 && handling.get() == 0);
    }

    private static int messageCount(String queue) {
        var info = admin.getQueueInfo(queue);
        return info == null ? 0 : (int) info.getMessageCount();
    }

    private static String body(Message m) {
        return new String(m.getBody(), StandardCharsets.UTF_8);
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void waitFor(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
