package dev.mirrorpid;

import java.nio.ByteBuffer;

/**
 * An instance's linear memory as this library reads and writes it: the blocks the module handed
 * out ({@code mp_alloc}) and the outputs it points to. WebAssembly's byte order, little-endian.
 * Each runtime has its own ({@link FlatMemory} for Chicory, a {@code ByteBuffer} over wasmtime's
 * memory for the native runtime).
 */
interface LinearMemory {
    /** Copies {@code data} to {@code addr}. */
    void write(int addr, byte[] data);

    /** Copies {@code n} bytes of {@code src} from its index {@code from} to {@code addr}. */
    void write(int addr, ByteBuffer src, int from, int n);

    /** Writes {@code v} at {@code addr}. */
    void writeI32(int addr, int v);

    /** The {@code int} at {@code addr}. */
    int readInt(int addr);

    /** The {@code long} at {@code addr}. */
    long readLong(int addr);

    /** A copy of the {@code n} bytes at {@code addr}. */
    byte[] readBytes(int addr, int n);

    /** Its size in bytes (what the module grew it to). */
    long sizeInBytes();
}
