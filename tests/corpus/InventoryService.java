package com.example.inventory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Keeps stock levels per SKU.
 * Javadoc may mention {@code Map<String, Integer>} and a stray brace }.
 */
@SuppressWarnings({"unchecked", "rawtypes"})
public class InventoryService
        extends AbstractService
        implements Auditable {

    private final Map<String, Integer> stock;
    private static final char SEPARATOR = '}';
    private static final String BANNER = """
        Inventory {
          version: "2"
        """;

    public InventoryService(Map<String, Integer> stock) {
        super("inventory");
        this.stock = stock;
    }

    /** Adds items; never negative. */
    @Override
    public synchronized int add(String sku,
                                int amount)
            throws IllegalArgumentException {
        if (amount < 0) {
            throw new IllegalArgumentException("negative amount: (" + amount + ")");
        }
        return stock.merge(sku, amount, Integer::sum);
    }

    public List<String> lowStock(int threshold) {
        List<String> result = new ArrayList<>();
        stock.forEach((sku, count) -> {
            if (count < threshold) {
                result.add(sku + SEPARATOR);
            }
        });
        return result;
    }

    private static class Entry implements Comparable<Entry> {
        String sku;

        @Override
        public int compareTo(Entry other) {
            return sku.compareTo(other.sku);
        }
    }
}
