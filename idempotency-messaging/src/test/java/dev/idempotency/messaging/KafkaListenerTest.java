package dev.idempotency.messaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyKeyException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.listener.ConcurrentMessageListenerContainer;
import org.springframework.kafka.listener.ContainerProperties;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.listener.MessageListener;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;
import org.springframework.util.backoff.FixedBackOff;

/**
 * {@link IdempotentListenerAdvice} on Spring Kafka, against the real broker {@code spring-kafka-test} runs in process
 * (KRaft), with the store and the listener's writes on an embedded H2. Each test has a topic and a consumer group of
 * its own.
 */
class KafkaListenerTest {

    private static EmbeddedKafkaKraftBroker broker;
    private static KafkaProducer<String, String> producer;

    private Database db;
    private String topic;
    private String group;
    private final List<ConcurrentMessageListenerContainer<String, String>> containers = new CopyOnWriteArrayList<>();
    private final List<ConsumerRecord<?, ?>> recovered = new CopyOnWriteArrayList<>();
    private final List<Throwable> recoveredBecause = new CopyOnWriteArrayList<>();
    private final AtomicInteger runs = new AtomicInteger();

    @BeforeAll
    static void startBroker() {
        broker = new EmbeddedKafkaKraftBroker(1, 2);
        broker.brokerProperty("group.initial.rebalance.delay.ms", "0");
        broker.afterPropertiesSet();
        producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.getBrokersAsString(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class));
    }

    @AfterAll
    static void stopBroker() {
        producer.close();
        broker.destroy();
    }

    @BeforeEach
    void setUp() {
        db = Database.h2();
        topic = "orders-" + UUID.randomUUID();
        group = "group-" + topic;
        broker.addTopics(new NewTopic(topic, 2, (short) 1));
    }

    @AfterEach
    void tearDown() {
        containers.forEach(ConcurrentMessageListenerContainer::stop);
        broker.doWithAdmin(admin -> admin.deleteTopics(List.of(topic)));
        db.close();
    }

    @Test
    void everyRecordSentTwiceRunsOnce() {
        start(b -> b.key("#headers['message-id']"), ContainerProperties.AckMode.BATCH, this::effect);
        for (int i = 0; i < 20; i++) {
            send(i % 2, "order-" + i, "m-" + i);
            send((i + 1) % 2, "order-" + i, "m-" + i);
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> db.keys() == 20 && runs.get() >= 20);
        awaitQuiet();
        assertThat(runs).hasValue(20);
        assertThat(db.effects()).isEqualTo(20);
    }

    @Test
    void recordsReadAgainAfterACrashBeforeTheOffsetCommitAreAckedWithoutRunning() {
        // the first consumer runs every record and dies without committing an offset (manual acks it never sends)
        ConcurrentMessageListenerContainer<String, String> first = start(b -> b.key("#headers['message-id']"),
                ContainerProperties.AckMode.MANUAL, this::effect);
        for (int i = 0; i < 10; i++) {
            send(i % 2, "order-" + i, "m-" + i);
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> db.effects() == 10);
        first.stop();
        // a consumer that takes the partitions over reads every record again from the last committed offset
        AtomicInteger delivered = new AtomicInteger();
        start(b -> b.key("#headers['message-id']"), ContainerProperties.AckMode.BATCH, r -> {
            delivered.incrementAndGet();
            effect(r);
        });
        await().atMost(Duration.ofSeconds(30)).until(() -> committed() == 10);
        assertThat(db.effects()).as("the redelivered records were acknowledged without running").isEqualTo(10);
        assertThat(delivered).as("the listener behind the advice never saw them").hasValue(0);
    }

    @Test
    void anOffsetKeyCountsARedeliveryOnceButASecondCopyTwice() {
        String offsetKey = "#topic + '-' + #partition + '@' + #offset";
        ConcurrentMessageListenerContainer<String, String> first = start(b -> b.key(offsetKey),
                ContainerProperties.AckMode.MANUAL, this::effect);
        send(0, "order-1", "m-1");
        send(0, "order-1", "m-1");
        await().atMost(Duration.ofSeconds(30)).until(() -> db.effects() == 2);
        first.stop();
        start(b -> b.key(offsetKey), ContainerProperties.AckMode.BATCH, this::effect);
        await().atMost(Duration.ofSeconds(30)).until(() -> committed() == 2);
        assertThat(db.effects()).as("the redeliveries replayed; the publisher's second copy is a new offset, so it"
                + " ran").isEqualTo(2);
    }

    @Test
    void aCopyOnAnotherPartitionWaitsForTheFirstRunAndIsNeverRecovered() throws InterruptedException {
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        UnaryOperator<IdempotentListenerAdvice.Builder> settings =
                b -> b.key("#headers['message-id']").lockTimeout(Duration.ofMillis(200));
        MessageListener<String, String> slow = r -> {
            effect(r);
            running.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        // two consumers of one group, one partition each: the publisher's two copies land on both
        ConcurrentMessageListenerContainer<String, String> a = start(settings, ContainerProperties.AckMode.BATCH, 1,
                slow);
        ConcurrentMessageListenerContainer<String, String> b = start(settings, ContainerProperties.AckMode.BATCH, 1,
                slow);
        await().atMost(Duration.ofSeconds(30)).until(() -> a.getAssignedPartitions().size() == 1
                && b.getAssignedPartitions().size() == 1);
        int partitionOfA = a.getAssignedPartitions().iterator().next().partition();
        send(partitionOfA, "order-1", "slow");
        assertThat(running.await(30, TimeUnit.SECONDS)).isTrue();
        send(1 - partitionOfA, "order-1", "slow");
        await().atMost(Duration.ofSeconds(30)).until(() -> inFlightRetries.get() >= 2);
        assertThat(runs).as("the copy did not run while the first was in flight").hasValue(1);
        release.countDown();
        await().atMost(Duration.ofSeconds(30)).until(() -> committed() == 2);
        assertThat(runs).hasValue(1);
        assertThat(db.effects()).isEqualTo(1);
        assertThat(recovered).as("the in-flight copy was retried, never sent to the recoverer").isEmpty();
    }

    @Test
    void aPoisonRecordReachesTheRecovererAsWithoutTheGuard() {
        start(b -> b.key("#headers['message-id']"), ContainerProperties.AckMode.BATCH, r -> {
            effect(r);
            if (r.value().equals("poison")) {
                throw new IllegalStateException("cannot process poison");
            }
        });
        send(0, "poison", "p-1");
        send(0, "order-1", "m-1");
        await().atMost(Duration.ofSeconds(30)).until(() -> committed() == 2);
        assertThat(recovered).extracting(r -> (Object) r.value()).containsExactly("poison");
        assertThat(runs).as("the poison record ran once and twice more, as the back-off says; the other once")
                .hasValue(4);
        assertThat(db.effects()).as("its writes rolled back with its claim").isEqualTo(1);
        assertThat(db.keys()).isEqualTo(1);
    }

    @Test
    void aRecordWithoutItsKeyHeaderGoesStraightToTheRecoverer() {
        start(b -> b.key("#headers['message-id']"), ContainerProperties.AckMode.BATCH, this::effect);
        producer.send(new ProducerRecord<>(topic, 0, "k", "no header"));
        await().atMost(Duration.ofSeconds(30)).until(() -> recovered.size() == 1);
        assertThat(runs).hasValue(0);
        assertThat(db.effects()).isZero();
    }

    @Test
    void aBusinessFieldOfAJsonValueIsAKey() {
        start(b -> b.key("#payload['orderNo']").fingerprint("#payload['amount']"), ContainerProperties.AckMode.BATCH,
                this::effect);
        producer.send(new ProducerRecord<>(topic, 0, "k", "{\"orderNo\":\"A-1\",\"amount\":5,\"attempt\":1}"));
        producer.send(new ProducerRecord<>(topic, 1, "k", "{\"orderNo\":\"A-1\",\"amount\":5,\"attempt\":2}"));
        await().atMost(Duration.ofSeconds(30)).until(() -> committed() == 2);
        assertThat(db.effects()).isEqualTo(1);
        assertThat(recovered).isEmpty();
    }

    @Test
    void aRecordWithAKnownIdAndAnotherValueGoesStraightToTheRecovererNotRun() {
        start(b -> b.key("#headers['message-id']"), ContainerProperties.AckMode.BATCH, this::effect);
        send(0, "order-1: 10 EUR", "m-1");
        await().atMost(Duration.ofSeconds(30)).until(() -> committed() == 1);
        send(0, "order-1: 1000 EUR", "m-1");
        await().atMost(Duration.ofSeconds(30)).until(() -> committed() == 2);
        assertThat(recovered).extracting(r -> (Object) r.value()).containsExactly("order-1: 1000 EUR");
        assertThat(recoveredBecause).singleElement().satisfies(e -> assertThat(e)
                .hasMessageContaining("has key 'm-1', which a message with another payload")
                .hasMessageContaining("it is not run, and not acknowledged as processed"));
        assertThat(runs).as("not retried by the back-off: straight to the recoverer").hasValue(1);
        assertThat(db.effects()).isEqualTo(1);
    }

    @Test
    void twoTenantsWithOneMessageIdAreTwoEffects() {
        start(b -> b.key("#headers['message-id']").scope("#headers['tenant']"), ContainerProperties.AckMode.BATCH,
                this::effect);
        send(0, "t1's order", "m-1", "t1");
        send(0, "t2's order", "m-1", "t2");
        send(0, "t1's x:y", "x:y", "t1");
        send(0, "t1:x's y", "y", "t1:x");
        send(0, "t1's order", "m-1", "t1");
        await().atMost(Duration.ofSeconds(30)).until(() -> committed() == 5);
        assertThat(db.effects()).as("four (tenant, id) pairs; t1's m-1 again replayed").isEqualTo(4);
        assertThat(recovered).isEmpty();
    }

    @Test
    void aKafkaListenerNeedsAKey() {
        assertThatThrownBy(() -> IdempotentListenerAdvice.kafka(db.executor, "orders").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'orders' needs a key expression");
        assertThatThrownBy(() -> IdempotentListenerAdvice.kafka(db.executor, "orders").key("#nope").build())
                .isInstanceOf(IdempotencyKeyException.class);
    }

    private final AtomicInteger inFlightRetries = new AtomicInteger();

    private ConcurrentMessageListenerContainer<String, String> start(
            UnaryOperator<IdempotentListenerAdvice.Builder> settings, ContainerProperties.AckMode ackMode,
            MessageListener<String, String> listener) {
        return start(settings, ackMode, 2, listener);
    }

    private ConcurrentMessageListenerContainer<String, String> start(
            UnaryOperator<IdempotentListenerAdvice.Builder> settings, ContainerProperties.AckMode ackMode,
            int concurrency, MessageListener<String, String> listener) {
        IdempotentListenerAdvice advice = settings.apply(IdempotentListenerAdvice.kafka(db.executor, "orders-" + topic)
                .transactionManager(db.transactions)).build();
        ContainerProperties props = new ContainerProperties(topic);
        props.setAckMode(ackMode);
        props.setAdviceChain(advice);
        props.setPollTimeout(100);
        props.setMessageListener((MessageListener<String, String>) r -> {
            runs.incrementAndGet();
            listener.onMessage(r);
        });
        DefaultKafkaConsumerFactory<String, String> consumers = new DefaultKafkaConsumerFactory<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.getBrokersAsString(),
                ConsumerConfig.GROUP_ID_CONFIG, group,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class));
        ConcurrentMessageListenerContainer<String, String> container =
                new ConcurrentMessageListenerContainer<>(consumers, props);
        container.setConcurrency(concurrency);
        DefaultErrorHandler errors = new DefaultErrorHandler((r, e) -> {
            recovered.add(r);
            recoveredBecause.add(e.getCause() != null ? e.getCause() : e);
        }, new FixedBackOff(0, 2));
        IdempotentKafkaErrorHandling.configure(errors, Duration.ofMillis(50));
        errors.setRetryListeners((r, e, attempt) -> {
            if (e instanceof IdempotencyInProgressException
                    || e.getCause() instanceof IdempotencyInProgressException) {
                inFlightRetries.incrementAndGet();
            }
        });
        container.setCommonErrorHandler(errors);
        container.start();
        containers.add(container);
        return container;
    }

    private void effect(ConsumerRecord<String, String> r) {
        db.effect(r.value());
    }

    private void send(int partition, String value, String messageId) {
        ProducerRecord<String, String> r = new ProducerRecord<>(topic, partition, "k", value);
        r.headers().add("message-id", messageId.getBytes(StandardCharsets.UTF_8));
        producer.send(r);
    }

    private void send(int partition, String value, String messageId, String tenant) {
        ProducerRecord<String, String> r = new ProducerRecord<>(topic, partition, "k", value);
        r.headers().add("message-id", messageId.getBytes(StandardCharsets.UTF_8));
        r.headers().add("tenant", tenant.getBytes(StandardCharsets.UTF_8));
        producer.send(r);
    }

    /** The offsets the group committed, summed over the topic's partitions. */
    private long committed() {
        return broker.doWithAdminFunction(admin -> {
            try {
                return admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().entrySet()
                        .stream().filter(e -> e.getKey().topic().equals(topic) && e.getValue() != null)
                        .mapToLong(e -> e.getValue().offset()).sum();
            } catch (Exception e) {
                return -1L;
            }
        });
    }

    private void awaitQuiet() {
        await().atMost(Duration.ofSeconds(30)).until(() -> committed() == 40);
    }
}
