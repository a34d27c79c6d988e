package dev.idempotency.replay;

import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The result types of the replay-fidelity and tampered-row suites: records, a POJO, an enum, a generic record, a
 * sealed interface of records, an abstract class, and probes that count every instantiation.
 */
public final class ReplayModel {

    private ReplayModel() {
    }

    public enum Status { NEW, PAID, REFUNDED }

    /** An enum whose constants have bodies: the enum class is abstract, each constant an anonymous subclass. */
    public enum Operation {
        PLUS {
            @Override
            public int apply(int a, int b) {
                return a + b;
            }
        },
        MINUS {
            @Override
            public int apply(int a, int b) {
                return a - b;
            }
        };

        public abstract int apply(int a, int b);
    }

    public record Money(BigDecimal amount, String currency) { }

    public record Line(String sku, int quantity, Money price) { }

    public record Order(String id, Status status, Money total, List<Line> lines, Instant createdAt) { }

    /** A generic record: {@code Page<Order>} must come back with {@code Order} elements. */
    public record Page<T>(List<T> items, int total) { }

    /** A POJO with a no-argument constructor and setters. */
    public static final class Customer {
        private String name;
        private int visits;
        private List<String> tags;

        public Customer() {
        }

        public Customer(String name, int visits, List<String> tags) {
            this.name = name;
            this.visits = visits;
            this.tags = tags;
        }

        public String getName() {
            return name;
        }

        public void setName(String name) {
            this.name = name;
        }

        public int getVisits() {
            return visits;
        }

        public void setVisits(int visits) {
            this.visits = visits;
        }

        public List<String> getTags() {
            return tags;
        }

        public void setTags(List<String> tags) {
            this.tags = tags;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Customer c && Objects.equals(name, c.name) && visits == c.visits
                    && Objects.equals(tags, c.tags);
        }

        @Override
        public int hashCode() {
            return Objects.hash(name, visits, tags);
        }

        @Override
        public String toString() {
            return "Customer[" + name + ", " + visits + ", " + tags + "]";
        }
    }

    /** A sealed interface of records: replays only through the codec's allow-list. */
    public sealed interface Payment permits Card, Transfer { }

    public record Card(String last4, Money amount) implements Payment { }

    public record Transfer(String iban, Money amount) implements Payment { }

    /**
     * A sealed interface with one allow-listed record and one permitted subclass that is never allow-listed and
     * counts its instantiations: Jackson itself would accept the permitted subclasses of a sealed type as subtypes.
     */
    public sealed interface Outcome permits Accepted, ProbeOutcome { }

    public record Accepted(String id) implements Outcome { }

    public record ProbeOutcome(String id) implements Outcome {
        public static final AtomicInteger INSTANCES = new AtomicInteger();

        public ProbeOutcome {
            INSTANCES.incrementAndGet();
        }
    }

    /** A record with a component of a sealed type: the subtype is chosen inside the value, not at its top. */
    public record Verdict(String id, Outcome outcome) { }

    /** An abstract class with one allow-listed subclass. */
    public abstract static class Animal {
        private String name;

        public String getName() {
            return name;
        }

        public void setName(String name) {
            this.name = name;
        }
    }

    public static final class Dog extends Animal {
        private boolean goodBoy;

        public Dog() {
        }

        public Dog(String name, boolean goodBoy) {
            setName(name);
            this.goodBoy = goodBoy;
        }

        public boolean isGoodBoy() {
            return goodBoy;
        }

        public void setGoodBoy(boolean goodBoy) {
            this.goodBoy = goodBoy;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Dog d && Objects.equals(getName(), d.getName()) && goodBoy == d.goodBoy;
        }

        @Override
        public int hashCode() {
            return Objects.hash(getName(), goodBoy);
        }
    }

    /** An open interface: one allow-listed implementation; {@link Probe} implements it too, but is not listed. */
    public interface Shape { }

    public record Circle(double radius) implements Shape { }

    /**
     * An interface whose own annotation lets a row name a class: the codec's validator must still admit only the
     * allow-listed {@link TaggedValue}.
     */
    @JsonTypeInfo(use = JsonTypeInfo.Id.CLASS, include = JsonTypeInfo.As.PROPERTY, property = "@class")
    public interface Tagged { }

    public record TaggedValue(String value) implements Tagged { }

    /**
     * Counts every instantiation; accepts any property, so that if Jackson ever chose it, building it would succeed
     * and the counter would show it.
     */
    public static final class Probe implements Shape, Tagged {
        public static final AtomicInteger INSTANCES = new AtomicInteger();

        public Probe() {
            INSTANCES.incrementAndGet();
        }

        @JsonAnySetter
        public void set(String name, Object value) {
        }
    }

    /** A business exception that counts its instantiations: a row naming it must never build it. */
    public static final class ProbeException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        public static final AtomicInteger INSTANCES = new AtomicInteger();

        public ProbeException(String message) {
            super(message);
            INSTANCES.incrementAndGet();
        }
    }

    /** A declared business exception. */
    public static class InsufficientFundsException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public InsufficientFundsException(String message) {
            super(message);
        }
    }

    /** A subclass of a declared business exception, itself not declared. */
    public static final class OverdraftLimitException extends InsufficientFundsException {
        private static final long serialVersionUID = 1L;

        public OverdraftLimitException(String message) {
            super(message);
        }
    }
}
