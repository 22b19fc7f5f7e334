package dev.mirrorpid;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * No function of the module becomes a method that HotSpot refuses to compile. HotSpot leaves a
 * method over 8,000 bytes of bytecode ({@code -XX:HugeMethodLimit}) to its interpreter unless the
 * JVM runs with {@code -XX:-DontCompileHugeMethods}, which no broker does; Chicory compiles each
 * WebAssembly function to one method, so one large function (the batch loop was one) made every
 * rewrite about five times slower. The module is built so that none is that large
 * ({@code scripts/setup.sh}'s {@code BROKER_WASM_OPT}, a few functions kept out of line in the
 * core); this reads the classes Chicory's build-time compiler made of it (the run-time compiler
 * emits the same code) and measures every method.
 */
class FunctionSizeTest {
    /** HotSpot's {@code HugeMethodLimit}: bytes of bytecode above which it does not compile. */
    static final int HUGE_METHOD_LIMIT = 8000;

    @Test
    void everyFunctionIsSmallEnoughForHotSpotToCompile() throws IOException {
        Map<String, Integer> sizes = new TreeMap<>();
        for (String name : generatedClasses()) {
            try (InputStream in = FunctionSizeTest.class.getResourceAsStream("/dev/mirrorpid/internal/" + name + ".class")) {
                codeLengths(new DataInputStream(in), name, sizes);
            }
        }
        assertTrue(sizes.size() > 100, "read the compiled module's methods: " + sizes.size());
        String largest = sizes.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().toString();
        List<String> huge = new ArrayList<>();
        sizes.forEach((method, size) -> {
            if (size > HUGE_METHOD_LIMIT) {
                huge.add(method + " (" + size + " bytes)");
            }
        });
        assertTrue(huge.isEmpty(), "methods HotSpot would leave to its interpreter: " + huge);
        System.out.println("largest compiled function: " + largest + " bytes of bytecode, limit " + HUGE_METHOD_LIMIT);
    }

    /** The classes the build-time compiler generated: the machine and each function group. */
    private static List<String> generatedClasses() {
        List<String> names = new ArrayList<>(List.of("BrokerModuleMachine", "BrokerModuleMachineMachineCall"));
        for (int i = 0; FunctionSizeTest.class.getResource("/dev/mirrorpid/internal/BrokerModuleMachineFuncGroup_" + i + ".class") != null; i++) {
            names.add("BrokerModuleMachineFuncGroup_" + i);
        }
        assertTrue(names.size() > 2, "no function group classes: was the build-time compiler run?");
        return names;
    }

    /** Every method's code length, from the class file's Code attributes (JVMS 4.7.3). */
    private static void codeLengths(DataInputStream in, String className, Map<String, Integer> out) throws IOException {
        if (in.readInt() != 0xCAFEBABE) {
            throw new IOException(className + " is not a class file");
        }
        in.readUnsignedShort(); // minor
        in.readUnsignedShort(); // major
        int count = in.readUnsignedShort();
        String[] utf8 = new String[count];
        for (int i = 1; i < count; i++) {
            int tag = in.readUnsignedByte();
            switch (tag) {
                case 1: utf8[i] = in.readUTF(); break;
                case 3: case 4: in.readInt(); break;
                case 5: case 6: in.readLong(); i++; break;
                case 7: case 8: case 16: case 19: case 20: in.readUnsignedShort(); break;
                case 9: case 10: case 11: case 12: case 17: case 18: in.readInt(); break;
                case 15: in.readUnsignedByte(); in.readUnsignedShort(); break;
                default: throw new IOException(className + ": constant pool tag " + tag);
            }
        }
        in.readUnsignedShort(); // access
        in.readUnsignedShort(); // this
        in.readUnsignedShort(); // super
        skip(in, 2 * in.readUnsignedShort()); // interfaces
        members(in, className, utf8, null); // fields
        members(in, className, utf8, out); // methods
    }

    private static void members(DataInputStream in, String className, String[] utf8, Map<String, Integer> out) throws IOException {
        int n = in.readUnsignedShort();
        for (int m = 0; m < n; m++) {
            in.readUnsignedShort(); // access
            String name = utf8[in.readUnsignedShort()];
            in.readUnsignedShort(); // descriptor
            int attributes = in.readUnsignedShort();
            for (int a = 0; a < attributes; a++) {
                String attribute = utf8[in.readUnsignedShort()];
                int length = in.readInt();
                if (out != null && "Code".equals(attribute)) {
                    in.readUnsignedShort(); // max_stack
                    in.readUnsignedShort(); // max_locals
                    int code = in.readInt();
                    out.merge(className + "." + name, code, Math::max);
                    skip(in, length - 8);
                } else {
                    skip(in, length);
                }
            }
        }
    }

    /** Skips exactly {@code n} bytes (a stream's own skip may skip fewer). */
    private static void skip(DataInputStream in, int n) throws IOException {
        in.readFully(new byte[n]);
    }
}
