package dev.mirrorpid;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The library's ABI facts against {@code docs/ABI.md}, which the Rust tests hold to the module. */
class AbiDocTest {
    private static List<String[]> table(String doc, String headingRow) {
        int at = doc.indexOf(headingRow);
        assertTrue(at >= 0, "no table " + headingRow);
        List<String[]> rows = new ArrayList<>();
        String[] lines = doc.substring(at).split("\n");
        for (int i = 2; i < lines.length && lines[i].startsWith("|"); i++) {
            String[] cells = lines[i].substring(1, lines[i].length() - 1).split("\\|");
            for (int c = 0; c < cells.length; c++) {
                cells[c] = cells[c].strip();
            }
            rows.add(cells);
        }
        return rows;
    }

    @Test
    void theCodeEnumIsTheErrorTable() {
        List<String> documented = new ArrayList<>();
        for (String[] row : table(Repo.text("docs/ABI.md"), "| code | name | meaning |")) {
            documented.add(row[0] + " " + row[1]);
        }
        List<String> here = new ArrayList<>();
        for (Code c : Code.values()) {
            here.add(c.value() + " " + c.name());
        }
        assertEquals(documented, here);
    }

    @Test
    void theSlotLayoutVersionAndReturnValuesAreThePages() {
        String doc = Repo.text("docs/ABI.md");
        assertTrue(doc.startsWith("# The broker module ABI (version " + Abi.VERSION + ")"));
        List<String[]> slots = table(doc, "| slot bytes | what | written by |");
        assertEquals("`[0, " + Abi.WINDOW + ")`", slots.get(0)[0]);
        assertEquals("`[" + Abi.SLOT_LEN_OFFSET + ", " + (Abi.SLOT_LEN_OFFSET + 4) + ")`", slots.get(1)[0]);
        assertEquals("`[" + Abi.SLOT_CHANGED_OFFSET + ", " + Abi.SLOT_BYTES + ")`", slots.get(2)[0]);
        assertTrue(doc.contains("slot's bytes `[" + Abi.CRC_OFFSET + ", " + (Abi.CRC_OFFSET + Abi.CRC_BYTES) + ")`"));
        assertTrue(doc.contains("`[" + Abi.PRODUCER_ID_OFFSET + ", " + (Abi.PRODUCER_ID_OFFSET + Abi.PRODUCER_ID_BYTES) + ")` (producer ID)"));
        assertTrue(doc.contains("; " + Abi.SLOT_BYTES + " bytes a slot"));
        List<String[]> info = table(doc, "| info bytes | what |");
        assertEquals(3, info.size());
        assertEquals("`[" + Abi.INFO_PTR_OFFSET + ", " + Abi.INFO_LEN_OFFSET + ")`", info.get(0)[0]);
        assertEquals("`[" + Abi.INFO_LEN_OFFSET + ", " + Abi.INFO_FLAG_OFFSET + ")`", info.get(1)[0]);
        assertEquals("`[" + Abi.INFO_FLAG_OFFSET + ", " + Abi.INFO_BYTES + ")`", info.get(2)[0]);
        assertTrue(doc.contains("a length of " + Abi.EMPTY_RECORDS_BYTES + " is the empty record list"));
        String map = String.join(" ", table(doc, "| export | signature | returns |").stream()
                .filter(r -> r[0].equals("`mp_map`")).findFirst().orElseThrow());
        assertTrue(map.contains("`" + Abi.MAP_NOT_A_PRODUCER + "`"), map);
        String load = String.join(" ", table(doc, "| export | signature | returns |").stream()
                .filter(r -> r[0].equals("`mp_load_record`")).findFirst().orElseThrow());
        assertTrue(load.contains("`" + Abi.LOAD_SKIPPED + "` skipped, `" + Abi.LOAD_BOUND + "` bound, `"
                + Abi.LOAD_DELETED + "` deleted, `" + Abi.LOAD_BOUND_EVICTING + "` bound and others evicted; `+"
                + Abi.LOAD_UNDECLARED + "`"), load);
        assertTrue(doc.contains("bit 1 (`" + Abi.FLAG_COMPLETE + "`) **complete**"));
    }
}
