package dev.idempotency.messaging;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.core.Queue;
import org.springframework.beans.factory.ListableBeanFactory;

/**
 * The delays a RabbitMQ topology declares: a queue with a message ttl ({@code x-message-ttl}) and a dead-letter
 * exchange is a delay (a retry or parking queue) after which its messages come back.
 */
final class RabbitDelays {

    private RabbitDelays() {
    }

    static Map<String, Duration> of(ListableBeanFactory beans) {
        Map<String, Duration> delays = new LinkedHashMap<>();
        beans.getBeansOfType(Queue.class, false, false).values().forEach(q -> add(q, delays));
        beans.getBeansOfType(Declarables.class, false, false).values()
                .forEach(d -> d.getDeclarablesByType(Queue.class).forEach(q -> add(q, delays)));
        return delays;
    }

    private static void add(Queue queue, Map<String, Duration> delays) {
        Map<String, Object> args = queue.getArguments();
        if (args.get("x-message-ttl") instanceof Number ttl && args.containsKey("x-dead-letter-exchange")) {
            delays.put("queue '" + queue.getName() + "' (x-message-ttl, dead-lettered to '"
                    + args.get("x-dead-letter-exchange") + "')", Duration.ofMillis(ttl.longValue()));
        }
    }
}
