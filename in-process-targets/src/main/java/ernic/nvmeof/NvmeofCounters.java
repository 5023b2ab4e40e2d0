package ernic.nvmeof;

import ernic.counters.Counter;
import ernic.counters.CounterRegistry;
import ernic.counters.Counters;

/** The target's counter sets, registered under {@code nvmeof.}: traffic, commands by opcode, errors by status. */
public final class NvmeofCounters {
    /** Connections, bytes and the rarer events. */
    public enum Traffic implements Counter {
        CM_REQ("cm.req"), CM_REP("cm.rep"), CM_RTU("cm.rtu"), CM_REJ("cm.rej"), CM_DREQ("cm.dreq"),
        CM_DREP("cm.drep"), CM_IGNORED("cm.ignored"),
        /** Fabrics Connects accepted (admin and I/O queues) and refused. */
        CONNECTIONS("connections"), CONNECTS_REFUSED("connects_refused"), CONTROLLERS("controllers"),
        QUEUES_CLOSED("queues_closed"), CAPSULES_DROPPED("capsules_dropped"),
        BYTES_READ("bytes.read"), BYTES_WRITTEN("bytes.written"), IN_CAPSULE_WRITES("in_capsule_writes"),
        SEND_INV("send_inv"), TRANSFERS_REFUSED("transfers_refused"), FATAL("controller_fatal"),
        KEEP_ALIVE_EXPIRED("keep_alive_expired"), QUEUE_OVERFLOW("queue_overflow"), FILE_ERRORS("file_errors");
        private final String key;

        Traffic(String key) {
            this.key = key;
        }

        @Override
        public String key() {
            return key;
        }
    }

    /** Commands received, by opcode: each with its command set and its opcode there (a fabrics command's fctype). */
    public enum Command implements Counter {
        CONNECT(Set.FABRICS, Nvme.FCTYPE_CONNECT), PROPERTY_GET(Set.FABRICS, Nvme.FCTYPE_PROPERTY_GET),
        PROPERTY_SET(Set.FABRICS, Nvme.FCTYPE_PROPERTY_SET),
        IDENTIFY(Set.ADMIN, Nvme.ADMIN_IDENTIFY), GET_LOG_PAGE(Set.ADMIN, Nvme.ADMIN_GET_LOG_PAGE),
        SET_FEATURES(Set.ADMIN, Nvme.ADMIN_SET_FEATURES), GET_FEATURES(Set.ADMIN, Nvme.ADMIN_GET_FEATURES),
        KEEP_ALIVE(Set.ADMIN, Nvme.ADMIN_KEEP_ALIVE), ABORT(Set.ADMIN, Nvme.ADMIN_ABORT),
        ASYNC_EVENT(Set.ADMIN, Nvme.ADMIN_ASYNC_EVENT),
        READ(Set.IO, Nvme.IO_READ), WRITE(Set.IO, Nvme.IO_WRITE), FLUSH(Set.IO, Nvme.IO_FLUSH),
        WRITE_ZEROES(Set.IO, Nvme.IO_WRITE_ZEROES), DSM(Set.IO, Nvme.IO_DSM),
        /** Any other opcode of any set. */
        UNSUPPORTED(null, -1);

        /** The command sets the controller takes: fabrics commands (by fctype), admin and I/O commands. */
        enum Set { FABRICS, ADMIN, IO }

        private static final Command[] ALL = values();
        private final Set set;
        private final int code;

        Command(Set set, int code) {
            this.set = set;
            this.code = code;
        }

        /** Command {@code code} of {@code set}, or {@link #UNSUPPORTED}. */
        static Command of(Set set, int code) {
            for (Command c : ALL) {
                if (c.set == set && c.code == code) {
                    return c;
                }
            }
            return UNSUPPORTED;
        }

        @Override
        public String key() {
            return "cmd." + name().toLowerCase();
        }
    }

    /** Commands completed with an error, by status. */
    public enum Status implements Counter {
        INVALID_OPCODE(Nvme.SC_INVALID_OPCODE), INVALID_FIELD(Nvme.SC_INVALID_FIELD),
        DATA_TRANSFER_ERROR(Nvme.SC_DATA_XFER_ERROR), INTERNAL(Nvme.SC_INTERNAL), INVALID_NS(Nvme.SC_INVALID_NS),
        COMMAND_SEQUENCE_ERROR(Nvme.SC_CMD_SEQ_ERROR), SGL_LENGTH_INVALID(Nvme.SC_SGL_INVALID_DATA),
        SGL_TYPE_INVALID(Nvme.SC_SGL_INVALID_TYPE), SGL_OFFSET_INVALID(Nvme.SC_SGL_INVALID_OFFSET),
        LBA_OUT_OF_RANGE(Nvme.SC_LBA_RANGE), INVALID_QID(Nvme.SC_QID_INVALID), ASYNC_LIMIT(Nvme.SC_ASYNC_LIMIT),
        INVALID_LOG_PAGE(Nvme.SC_INVALID_LOG_PAGE), FEATURE_NOT_SAVEABLE(Nvme.SC_FEATURE_NOT_SAVEABLE),
        CONNECT_FORMAT(Nvme.SC_CONNECT_FORMAT), CONNECT_CTRL_BUSY(Nvme.SC_CONNECT_CTRL_BUSY),
        CONNECT_INVALID_PARAM(Nvme.SC_CONNECT_INVALID_PARAM), CONNECT_INVALID_HOST(Nvme.SC_CONNECT_INVALID_HOST),
        WRITE_FAULT(Nvme.SC_WRITE_FAULT), READ_ERROR(Nvme.SC_READ_ERROR), OTHER(-1);
        final int code;

        Status(int code) {
            this.code = code;
        }

        static Status of(int status) {
            int sc = status & 0x7ff;
            for (Status s : values()) {
                if (s.code == sc) {
                    return s;
                }
            }
            return OTHER;
        }

        @Override
        public String key() {
            return "err." + name().toLowerCase();
        }
    }

    final Counters<Traffic> traffic = new Counters<>(Traffic.class);
    final Counters<Command> commands = new Counters<>(Command.class);
    final Counters<Status> errors = new Counters<>(Status.class);

    /** One traffic counter's value (device thread; a snapshot elsewhere). */
    public long get(Traffic c) {
        return traffic.get(c);
    }

    /** Registers the three sets under {@code nvmeof.}. */
    public void registerIn(CounterRegistry registry) {
        registry.register("nvmeof.", traffic);
        registry.register("nvmeof.", commands);
        registry.register("nvmeof.", errors);
    }
}
