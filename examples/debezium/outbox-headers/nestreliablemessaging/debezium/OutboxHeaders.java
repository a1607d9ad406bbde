package nestreliablemessaging.debezium;

import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Map;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.header.Headers;
import org.apache.kafka.connect.transforms.Transformation;
import org.apache.kafka.connect.transforms.util.SimpleConfig;

/**
 * A Kafka Connect transformation for the outbox of nest-reliable-messaging, run after Debezium's outbox event
 * router (see docs/guide/14-debezium.md). The router can put a column into one header but cannot spread a JSON
 * object over several: this turns the header holding the row's {@code headers} column (the application's
 * headers and the writer's trace context) into one Kafka header per entry, as the library's relay sends them,
 * and writes the {@code msg.occurred-at} header in the form the relay writes (JavaScript's
 * {@code Date.toISOString()}: UTC, milliseconds), where Debezium writes the column's own precision.
 *
 * <p>Options: {@code json.header} (default {@code msg.outbox-headers}), the header the router filled from the
 * {@code headers} column, removed here; {@code timestamp.header} (default {@code msg.occurred-at}). Entries
 * named {@code msg.*} are reserved for the library and never taken from the column (the relay skips them too),
 * except {@code msg.event-version}, the event's version {@code OutboxService.add()} stores there, taken when it
 * is a valid version (digits, no leading zero, at most 7) as the relay's {@code encodeEnvelope} does.
 */
public class OutboxHeaders<R extends ConnectRecord<R>> implements Transformation<R> {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final DateTimeFormatter TO_ISO_STRING =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);
    private static final String RESERVED_PREFIX = "msg.";
    private static final String EVENT_VERSION = "msg.event-version";
    private static final java.util.regex.Pattern VERSION = java.util.regex.Pattern.compile("[1-9][0-9]{0,6}");

    private static final ConfigDef CONFIG = new ConfigDef()
            .define("json.header", ConfigDef.Type.STRING, "msg.outbox-headers", ConfigDef.Importance.HIGH,
                    "The header holding the outbox row's headers column (a JSON object of strings); removed.")
            .define("timestamp.header", ConfigDef.Type.STRING, "msg.occurred-at", ConfigDef.Importance.MEDIUM,
                    "The header holding the row's occurred_at, rewritten as Date.toISOString() writes it.");

    private String jsonHeader;
    private String timestampHeader;

    @Override
    public void configure(Map<String, ?> configs) {
        SimpleConfig config = new SimpleConfig(CONFIG, configs);
        jsonHeader = config.getString("json.header");
        timestampHeader = config.getString("timestamp.header");
    }

    @Override
    public R apply(R record) {
        Header json = record.headers().lastWithName(jsonHeader);
        Header occurredAt = record.headers().lastWithName(timestampHeader);
        if (json == null && occurredAt == null) return record; // not an outbox message (a heartbeat, say)
        Headers headers = record.headers().duplicate();
        headers.remove(jsonHeader);
        if (json != null && json.value() != null) spread(String.valueOf(json.value()), headers);
        if (occurredAt != null && occurredAt.value() != null) {
            headers.remove(timestampHeader);
            headers.addString(timestampHeader, toIsoString(String.valueOf(occurredAt.value())));
        }
        return record.newRecord(record.topic(), record.kafkaPartition(), record.keySchema(), record.key(),
                record.valueSchema(), record.value(), record.timestamp(), headers);
    }

    private void spread(String text, Headers headers) {
        JsonNode object;
        try {
            object = JSON.readTree(text);
        } catch (JsonProcessingException e) {
            throw new DataException("The outbox row's headers are not JSON: " + e.getOriginalMessage());
        }
        if (object == null || !object.isObject())
            throw new DataException("The outbox row's headers are not a JSON object.");
        for (Map.Entry<String, JsonNode> entry : object.properties()) {
            if (entry.getValue().isNull()) continue;
            JsonNode value = entry.getValue();
            if (entry.getKey().equals(EVENT_VERSION)) {
                if (value.isTextual() && VERSION.matcher(value.asText()).matches() && !value.asText().equals("1"))
                    headers.addString(EVENT_VERSION, value.asText());
                continue;
            }
            if (entry.getKey().startsWith(RESERVED_PREFIX)) continue;
            headers.addString(entry.getKey(), value.isTextual() ? value.asText() : value.toString());
        }
    }

    private static String toIsoString(String value) {
        try {
            return TO_ISO_STRING.format(OffsetDateTime.parse(value));
        } catch (DateTimeParseException e) {
            throw new DataException("The outbox row's occurred_at is not an ISO 8601 time: " + value);
        }
    }

    @Override
    public ConfigDef config() {
        return CONFIG;
    }

    @Override
    public void close() {}
}
