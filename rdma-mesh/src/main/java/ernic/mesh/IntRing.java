package ernic.mesh;

import java.util.NoSuchElementException;

/**
 * A first-in first-out queue of ints in one array that doubles when full and never shrinks: once a connection has
 * seen its busiest moment, adding and removing allocate nothing. One per use, on the event loop.
 */
final class IntRing {
    private int[] items = new int[16];
    private int head;
    private int size;

    void add(int v) {
        if (size == items.length) {
            int[] bigger = new int[items.length * 2];
            for (int i = 0; i < size; i++) {
                bigger[i] = items[(head + i) & (items.length - 1)];
            }
            items = bigger;
            head = 0;
        }
        items[(head + size) & (items.length - 1)] = v;
        size++;
    }

    /** Takes the oldest. */
    int remove() {
        if (size == 0) {
            throw new NoSuchElementException();
        }
        int v = items[head];
        head = (head + 1) & (items.length - 1);
        size--;
        return v;
    }

    boolean isEmpty() {
        return size == 0;
    }

    int size() {
        return size;
    }

    void clear() {
        head = 0;
        size = 0;
    }
}
