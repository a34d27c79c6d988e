package dev.idempotency.sample.messaging;

import dev.idempotency.IdempotentExecutor;
import dev.idempotency.jdbc.JdbcIdempotencyStore;
import dev.idempotency.messaging.IdempotentListenerAdvice;
import dev.idempotency.spring.EnableIdempotency;
import javax.sql.DataSource;
import org.springframework.amqp.rabbit.annotation.EnableRabbit;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * One consumer process: the idempotency store on the shared database, the advice, a container factory that puts it in
 * its advice chain, and the listener ({@link Shipments}). The {@code DataSource} and the {@code ConnectionFactory} are
 * given by {@link MessagingSample}.
 */
@Configuration(proxyBeanMethods = false)
@EnableRabbit
@EnableIdempotency
class ConsumerConfiguration {

    @Bean
    JdbcIdempotencyStore idempotencyStore(DataSource dataSource) {
        return JdbcIdempotencyStore.builder(dataSource).build();
    }

    @Bean
    PlatformTransactionManager transactionManager(DataSource dataSource) {
        return new DataSourceTransactionManager(dataSource);
    }

    /** The key is the publisher's message id, per queue; the claim commits with the shipment, before the ack. */
    @Bean
    IdempotentListenerAdvice shipmentsIdempotency(IdempotentExecutor executor, PlatformTransactionManager tx) {
        return IdempotentListenerAdvice.rabbit(executor, "shipments").transactionManager(tx).ttl("7d").build();
    }

    @Bean
    SimpleRabbitListenerContainerFactory idempotentFactory(ConnectionFactory connections,
            IdempotentListenerAdvice shipmentsIdempotency, MessagingSample.Deliveries deliveries) {
        SimpleRabbitListenerContainerFactory factory = new SimpleRabbitListenerContainerFactory();
        factory.setConnectionFactory(connections);
        factory.setConcurrentConsumers(4);
        factory.setPrefetchCount(1);
        factory.setDefaultRequeueRejected(false);
        factory.setAdviceChain(shipmentsIdempotency);
        factory.setAfterReceivePostProcessors(deliveries); // the sample's counter, not needed by the guard
        return factory;
    }

    @Bean
    Shipments shipments(DataSource dataSource) {
        return new Shipments(new JdbcTemplate(dataSource));
    }
}
