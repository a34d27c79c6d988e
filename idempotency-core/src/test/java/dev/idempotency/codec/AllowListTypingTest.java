package dev.idempotency.codec;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.annotation.JsonTypeInfo;
import dev.idempotency.IdempotencyReplayException;
import dev.idempotency.ResultType;
import java.lang.reflect.Type;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.DatabindContext;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.annotation.JsonTypeIdResolver;
import tools.jackson.databind.jsontype.impl.TypeIdResolverBase;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.module.SimpleModule;

/**
 * How the allow-list meets the type settings an application already has on its classes and its mapper: ids kept
 * beside a property, an abstract-type mapping or a concrete base class used as the default of a row with no id, the
 * application's own type id resolver.
 */
class AllowListTypingTest {

    public interface Instrument {
    }

    public record Bond(String isin) implements Instrument {
    }

    public record Share(String ticker) implements Instrument {
    }

    /** The application keeps the type id beside the property, as an external property. */
    public record Position(@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.EXTERNAL_PROPERTY,
            property = "kind") Instrument instrument, int quantity) {
    }

    @Test
    void anExternalTypeIdOnAPropertyStaysBesideThePropertyAndReadsBack() {
        JacksonResultCodec codec = JacksonResultCodec.builder().allowSubtypes(Bond.class, Share.class).build();
        Position position = new Position(new Share("ACME"), 3);

        byte[] data = codec.encode(position, Position.class);

        assertThat(new String(data, UTF_8)).isEqualTo("{\"instrument\":{\"ticker\":\"ACME\"},\"kind\":\"Share\","
                + "\"quantity\":3}");
        assertThat(codec.decode(data, Position.class)).isEqualTo(position);
    }

    @Test
    void anExternalTypeIdOnAPropertyNamesOnlyAllowListedClasses() {
        JacksonResultCodec codec = JacksonResultCodec.builder().allowSubtypes(Bond.class).build();
        assertThatThrownBy(() -> codec.encode(new Position(new Share("ACME"), 3), Position.class))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining(Share.class.getName());
        byte[] tampered = "{\"instrument\":{\"ticker\":\"ACME\"},\"kind\":\"Share\",\"quantity\":3}".getBytes(UTF_8);
        assertThatThrownBy(() -> codec.decode(tampered, Position.class))
                .isInstanceOf(IdempotencyReplayException.class)
                .hasMessageContaining("'Share'");
    }

    private static JsonMapper mapping(Class<? extends Instrument> defaultInstrument) {
        SimpleModule defaults = new SimpleModule("defaults");
        defaults.addAbstractTypeMapping(Instrument.class, defaultInstrument);
        return JsonMapper.builder().addModule(defaults).build();
    }

    @Test
    void theApplicationsAbstractTypeMappingReadsARowWithoutATypeIdWhenItsTargetIsAllowListed() {
        JacksonResultCodec codec = JacksonResultCodec.builder().mapper(mapping(Bond.class))
                .allowSubtypes(Bond.class, Share.class).build();

        assertThat(codec.decode("{\"isin\":\"XS1\"}".getBytes(UTF_8), Instrument.class)).isEqualTo(new Bond("XS1"));
        assertThat(codec.decode(codec.encode(new Share("ACME"), Instrument.class), Instrument.class))
                .isEqualTo(new Share("ACME"));
    }

    @Test
    void anAbstractTypeMappingToAClassOffTheAllowListNeverBuildsIt() {
        JacksonResultCodec codec = JacksonResultCodec.builder().mapper(mapping(Bond.class))
                .allowSubtypes(Share.class).build();

        assertThatThrownBy(() -> codec.decode("{\"isin\":\"XS1\"}".getBytes(UTF_8), Instrument.class))
                .isInstanceOf(IdempotencyReplayException.class);
        assertThat(codec.decode(codec.encode(new Share("ACME"), Instrument.class), Instrument.class))
                .isEqualTo(new Share("ACME"));
    }

    /** A concrete base class that is its own default: a row with no type id is a plain fee. */
    @JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "kind", defaultImpl = Fee.class)
    public static class Fee {
        public int cents;
    }

    public static final class LateFee extends Fee {
        public int days;
    }

    @Test
    void aRowWithoutATypeIdReadsAsTheDeclaredConcreteClassWhenThatIsItsDefault() {
        JacksonResultCodec codec = JacksonResultCodec.builder().allowSubtypes(LateFee.class).build();

        Object plain = codec.decode("{\"cents\":5}".getBytes(UTF_8), Fee.class);
        assertThat(plain).isExactlyInstanceOf(Fee.class).extracting("cents").isEqualTo(5);

        LateFee late = new LateFee();
        late.cents = 7;
        late.days = 3;
        byte[] data = codec.encode(late, Fee.class);
        assertThat(new String(data, UTF_8)).isEqualTo("{\"kind\":\"LateFee\",\"cents\":7,\"days\":3}");
        assertThat(codec.decode(data, Fee.class)).isExactlyInstanceOf(LateFee.class).extracting("days").isEqualTo(3);
    }

    /** The application's own resolver writes its ids; it is never asked to turn an id into a class. */
    @JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "type")
    @JsonTypeIdResolver(VehicleCodes.class)
    public interface Vehicle {
    }

    public record Car(int seats) implements Vehicle {
    }

    public record Bike(int gears) implements Vehicle {
    }

    public static final class VehicleCodes extends TypeIdResolverBase {
        @Override
        public String idFromValue(DatabindContext ctxt, Object value) {
            return idFromValueAndType(ctxt, value, value.getClass());
        }

        @Override
        public String idFromValueAndType(DatabindContext ctxt, Object value, Class<?> suggestedType) {
            return "v-" + suggestedType.getSimpleName().toLowerCase(java.util.Locale.ROOT);
        }

        @Override
        public JavaType typeFromId(DatabindContext ctxt, String id) {
            throw new AssertionError("the allow-list resolves ids, never the application's resolver: " + id);
        }

        @Override
        public JsonTypeInfo.Id getMechanism() {
            return JsonTypeInfo.Id.CUSTOM;
        }
    }

    @Test
    void theApplicationsTypeIdResolverNamesTheAllowListedClassesOnly() {
        JacksonResultCodec codec = JacksonResultCodec.builder().allowSubtypes(Car.class).build();
        Type vehicles = new ResultType<List<Vehicle>>() { }.type();

        byte[] data = codec.encode(List.of(new Car(4)), vehicles);

        assertThat(new String(data, UTF_8)).isEqualTo("[{\"type\":\"v-car\",\"seats\":4}]");
        assertThat(codec.decode(data, vehicles)).isEqualTo(List.of(new Car(4)));
        assertThatThrownBy(() -> codec.encode(List.of(new Bike(21)), vehicles))
                .isInstanceOf(IdempotencyReplayException.class).hasMessageContaining(Bike.class.getName());
        assertThatThrownBy(() -> codec.decode("[{\"type\":\"v-bike\",\"gears\":21}]".getBytes(UTF_8), vehicles))
                .isInstanceOf(IdempotencyReplayException.class).hasMessageContaining("'v-bike'");
    }

    /** Written as {@code ["Stamp", {...}]}; a row recorded before the class carried type ids has no wrapper. */
    @JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.WRAPPER_ARRAY, defaultImpl = Stamp.class)
    public record Stamp(String text) {
    }

    @Test
    void aRowWithoutItsTypeWrapperReadsAsTheAllowListedDefault() {
        JacksonResultCodec codec = JacksonResultCodec.builder().allowSubtypes(Stamp.class).build();

        assertThat(new String(codec.encode(new Stamp("a"), Stamp.class), UTF_8))
                .isEqualTo("[\"Stamp\",{\"text\":\"a\"}]");
        assertThat(codec.decode("{\"text\":\"b\"}".getBytes(UTF_8), Stamp.class)).isEqualTo(new Stamp("b"));
    }
}
