package ernic.s3;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The store's contents in RAM: buckets, their objects (sorted by key, for listing) and multipart uploads
 * in progress. Bounded by a byte capacity (objects and uploaded parts) and an object count; bodies still
 * arriving draw on an in-flight {@link BodyCollector.Budget} of the same size.
 */
final class ObjectStore implements BodyCollector.Budget {
    static final int MAX_BUCKETS = 100, MAX_UPLOADS = 1000, MAX_PARTS = 10_000;

    /** An object: its bytes and what GET and HEAD report about it. */
    record Entry(Blob data, String etag, long modified, String contentType, List<HttpRequest.Field> metadata) {
    }

    record Part(int number, Blob data, String etag, byte[] md5, long modified) {
    }

    static final class Upload {
        final String id, key;
        final long created;
        final String contentType;
        final List<HttpRequest.Field> metadata;
        final TreeMap<Integer, Part> parts = new TreeMap<>();

        Upload(String id, String key, long created, String contentType, List<HttpRequest.Field> metadata) {
            this.id = id;
            this.key = key;
            this.created = created;
            this.contentType = contentType;
            this.metadata = metadata;
        }
    }

    static final class Bucket {
        final String name;
        final long created;
        final TreeMap<String, Entry> objects = new TreeMap<>();
        final Map<String, Upload> uploads = new LinkedHashMap<>();

        Bucket(String name, long created) {
            this.name = name;
            this.created = created;
        }
    }

    /** Whether something fits. */
    enum Room { OK, TOO_LARGE, FULL, TOO_MANY_OBJECTS }

    final long capacity;
    final int maxObjects;
    private final TreeMap<String, Bucket> buckets = new TreeMap<>();
    private long used, inFlight;
    private int objects, uploads;

    ObjectStore(long capacity, int maxObjects) {
        this.capacity = capacity;
        this.maxObjects = maxObjects;
    }

    long used() {
        return used;
    }

    int objectCount() {
        return objects;
    }

    /**
     * Bodies in flight are bounded by the capacity on their own (not by what is free: a PUT that replaces an
     * object fits although the old one still counts), so RAM stays under twice {@code size}.
     */
    @Override
    public boolean take(long n) {
        if (inFlight + n > capacity) {
            return false;
        }
        inFlight += n;
        return true;
    }

    @Override
    public void give(long n) {
        inFlight -= n;
    }

    long inFlight() {
        return inFlight;
    }

    Bucket bucket(String name) {
        return name == null ? null : buckets.get(name);
    }

    Iterable<Bucket> buckets() {
        return buckets.values();
    }

    /** Creates a bucket; false if the bucket limit is reached. */
    boolean createBucket(String name, long now) {
        if (buckets.size() >= MAX_BUCKETS) {
            return false;
        }
        buckets.put(name, new Bucket(name, now));
        return true;
    }

    /** Removes an empty bucket, with any uploads it still had. */
    void deleteBucket(Bucket b) {
        for (Upload u : b.uploads.values()) {
            freeParts(u);
        }
        uploads -= b.uploads.size();
        buckets.remove(b.name);
    }

    /** Whether an object of {@code size} bytes may be stored at {@code key} (replacing what is there). */
    Room roomFor(Bucket b, String key, long size) {
        if (size > Math.min(capacity, S3Options.MAX_OBJECT)) {
            return Room.TOO_LARGE;
        }
        Entry old = b.objects.get(key);
        if (old == null && objects >= maxObjects) {
            return Room.TOO_MANY_OBJECTS;
        }
        long freed = old == null ? 0 : old.data.size();
        return used - freed + size > capacity ? Room.FULL : Room.OK;
    }

    /** Stores an object; the caller checked {@link #roomFor}. */
    void put(Bucket b, String key, Entry e) {
        Entry old = b.objects.put(key, e);
        used += e.data.size() - (old == null ? 0 : old.data.size());
        if (old == null) {
            objects++;
        }
    }

    Entry delete(Bucket b, String key) {
        Entry old = b.objects.remove(key);
        if (old != null) {
            used -= old.data.size();
            objects--;
        }
        return old;
    }

    /** A new upload, or null when too many are in progress. */
    Upload startUpload(Bucket b, String id, String key, long now, String contentType,
                       List<HttpRequest.Field> metadata) {
        if (uploads >= MAX_UPLOADS) {
            return null;
        }
        Upload u = new Upload(id, key, now, contentType, metadata);
        b.uploads.put(id, u);
        uploads++;
        return u;
    }

    Room roomForPart(Upload u, int number, long size, long maxPart) {
        if (size > maxPart) {
            return Room.TOO_LARGE;
        }
        Part old = u.parts.get(number);
        long freed = old == null ? 0 : old.data.size();
        return used - freed + size > capacity ? Room.FULL : Room.OK;
    }

    void putPart(Upload u, Part p) {
        Part old = u.parts.put(p.number, p);
        used += p.data.size() - (old == null ? 0 : old.data.size());
    }

    void abort(Bucket b, Upload u) {
        freeParts(u);
        b.uploads.remove(u.id);
        uploads--;
    }

    /** Makes the upload the object {@code e} (made of its chosen parts); the rest are freed. Count checked. */
    void complete(Bucket b, Upload u, Entry e) {
        long partBytes = 0;
        for (Part p : u.parts.values()) {
            partBytes += p.data.size();
        }
        used -= partBytes;
        b.uploads.remove(u.id);
        uploads--;
        put(b, u.key, e);
    }

    private void freeParts(Upload u) {
        for (Part p : u.parts.values()) {
            used -= p.data.size();
        }
        u.parts.clear();
    }
}
