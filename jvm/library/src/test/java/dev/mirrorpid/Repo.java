package dev.mirrorpid;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.kafka.common.Uuid;

/** Files of the repository the tests read: docs, reference vectors, fixtures. */
final class Repo {
    private Repo() {}

    /** The topic of the reference vectors. */
    static final Uuid TOPIC = Uuid.fromString("bxw7Kp1OS3-KHC0-T1prfA");

    /** One module load for every test class (compiling it takes a second or two). */
    static final MirrorPid MODULE = MirrorPid.load();

    static Path root() {
        return Path.of(System.getProperty("mirrorpid.root", "../.."));
    }

    static String text(String path) {
        try {
            return Files.readString(root().resolve(path));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static JsonNode json(String path) {
        try {
            return new ObjectMapper().readTree(text(path));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static byte[] hex(String s) {
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    static String hex(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (byte x : b) {
            s.append(String.format("%02x", x));
        }
        return s.toString();
    }

    static PidMapper mapper() {
        return MODULE.newMapper(MapperConfig.builder(TOPIC, 0).build());
    }
}
