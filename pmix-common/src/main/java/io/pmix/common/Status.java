package io.pmix.common;

import com.google.errorprone.annotations.Immutable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A {@code pmix_status_t}: the raw code, and its OpenPMIx 4.2.2 name when it has one.
 *
 * <p>Unknown codes are carried through unchanged ({@link #of(int)} never fails): hosts define their
 * own codes and a newer peer may send one this library does not know. Two statuses are equal when
 * their codes are. Instances are immutable and thread-safe.
 */
@Immutable
public final class Status {
  // Sized for the ~230 definitions below: a fresh JVM's first init runs this class's
  // initialization in the interpreter, where growing the map (and hashing every name for a
  // by-name map nobody may ask) cost 1-3 ms; the names' map is made when first asked.
  private static final Map<Integer, Status> BY_CODE = new HashMap<>(512);
  private static final List<Status> DEFINED = new ArrayList<>(256);

  private final int code;
  private final String name;

  private Status(int code, String name) {
    this.code = code;
    this.name = name;
  }

  private static Status define(int code, String name) {
    Status s = new Status(code, name);
    // Aliases (two names for one code) keep the first name as canonical.
    BY_CODE.putIfAbsent(code, s);
    DEFINED.add(s);
    return s;
  }

  /** The names' map, made at the first {@link #forName}. */
  private static final class ByName {
    static final Map<String, Status> MAP;

    static {
      Map<String, Status> m = new HashMap<>(512);
      for (Status s : DEFINED) {
        m.put(s.name, s);
      }
      MAP = m;
    }
  }

  // BEGIN GENERATED: every status of OpenPMIx 4.2.2 pmix_common.h and pmix_deprecated.h.
  public static final Status SUCCESS = define(0, "PMIX_SUCCESS");
  public static final Status ERROR = define(-1, "PMIX_ERROR");
  public static final Status ERR_SILENT = define(-2, "PMIX_ERR_SILENT");
  public static final Status DEBUGGER_RELEASE = define(-3, "PMIX_DEBUGGER_RELEASE");
  public static final Status ERR_DEBUGGER_RELEASE = define(-3, "PMIX_ERR_DEBUGGER_RELEASE");
  public static final Status ERR_PROC_RESTART = define(-4, "PMIX_ERR_PROC_RESTART");
  public static final Status ERR_PROC_CHECKPOINT = define(-5, "PMIX_ERR_PROC_CHECKPOINT");
  public static final Status ERR_PROC_MIGRATE = define(-6, "PMIX_ERR_PROC_MIGRATE");
  public static final Status ERR_PROC_ABORTED = define(-7, "PMIX_ERR_PROC_ABORTED");
  public static final Status ERR_PROC_REQUESTED_ABORT = define(-8, "PMIX_ERR_PROC_REQUESTED_ABORT");
  public static final Status ERR_PROC_ABORTING = define(-9, "PMIX_ERR_PROC_ABORTING");
  public static final Status ERR_SERVER_FAILED_REQUEST =
      define(-10, "PMIX_ERR_SERVER_FAILED_REQUEST");
  public static final Status ERR_EXISTS = define(-11, "PMIX_ERR_EXISTS");
  public static final Status EXISTS = define(-11, "PMIX_EXISTS");
  public static final Status ERR_INVALID_CRED = define(-12, "PMIX_ERR_INVALID_CRED");
  public static final Status ERR_HANDSHAKE_FAILED = define(-13, "PMIX_ERR_HANDSHAKE_FAILED");
  public static final Status ERR_READY_FOR_HANDSHAKE = define(-14, "PMIX_ERR_READY_FOR_HANDSHAKE");
  public static final Status ERR_WOULD_BLOCK = define(-15, "PMIX_ERR_WOULD_BLOCK");
  public static final Status ERR_UNKNOWN_DATA_TYPE = define(-16, "PMIX_ERR_UNKNOWN_DATA_TYPE");
  public static final Status ERR_PROC_ENTRY_NOT_FOUND =
      define(-17, "PMIX_ERR_PROC_ENTRY_NOT_FOUND");
  public static final Status ERR_TYPE_MISMATCH = define(-18, "PMIX_ERR_TYPE_MISMATCH");
  public static final Status ERR_UNPACK_INADEQUATE_SPACE =
      define(-19, "PMIX_ERR_UNPACK_INADEQUATE_SPACE");
  public static final Status ERR_UNPACK_FAILURE = define(-20, "PMIX_ERR_UNPACK_FAILURE");
  public static final Status ERR_PACK_FAILURE = define(-21, "PMIX_ERR_PACK_FAILURE");
  public static final Status ERR_PACK_MISMATCH = define(-22, "PMIX_ERR_PACK_MISMATCH");
  public static final Status ERR_NO_PERMISSIONS = define(-23, "PMIX_ERR_NO_PERMISSIONS");
  public static final Status ERR_TIMEOUT = define(-24, "PMIX_ERR_TIMEOUT");
  public static final Status ERR_UNREACH = define(-25, "PMIX_ERR_UNREACH");
  public static final Status ERR_IN_ERRNO = define(-26, "PMIX_ERR_IN_ERRNO");
  public static final Status ERR_BAD_PARAM = define(-27, "PMIX_ERR_BAD_PARAM");
  public static final Status ERR_RESOURCE_BUSY = define(-28, "PMIX_ERR_RESOURCE_BUSY");
  public static final Status ERR_OUT_OF_RESOURCE = define(-29, "PMIX_ERR_OUT_OF_RESOURCE");
  public static final Status ERR_DATA_VALUE_NOT_FOUND =
      define(-30, "PMIX_ERR_DATA_VALUE_NOT_FOUND");
  public static final Status ERR_INIT = define(-31, "PMIX_ERR_INIT");
  public static final Status ERR_NOMEM = define(-32, "PMIX_ERR_NOMEM");
  public static final Status ERR_INVALID_ARG = define(-33, "PMIX_ERR_INVALID_ARG");
  public static final Status ERR_INVALID_KEY = define(-34, "PMIX_ERR_INVALID_KEY");
  public static final Status ERR_INVALID_KEY_LENGTH = define(-35, "PMIX_ERR_INVALID_KEY_LENGTH");
  public static final Status ERR_INVALID_VAL = define(-36, "PMIX_ERR_INVALID_VAL");
  public static final Status ERR_INVALID_VAL_LENGTH = define(-37, "PMIX_ERR_INVALID_VAL_LENGTH");
  public static final Status ERR_INVALID_LENGTH = define(-38, "PMIX_ERR_INVALID_LENGTH");
  public static final Status ERR_INVALID_NUM_ARGS = define(-39, "PMIX_ERR_INVALID_NUM_ARGS");
  public static final Status ERR_INVALID_ARGS = define(-40, "PMIX_ERR_INVALID_ARGS");
  public static final Status ERR_INVALID_NUM_PARSED = define(-41, "PMIX_ERR_INVALID_NUM_PARSED");
  public static final Status ERR_INVALID_KEYVALP = define(-42, "PMIX_ERR_INVALID_KEYVALP");
  public static final Status ERR_INVALID_SIZE = define(-43, "PMIX_ERR_INVALID_SIZE");
  public static final Status ERR_INVALID_NAMESPACE = define(-44, "PMIX_ERR_INVALID_NAMESPACE");
  public static final Status ERR_SERVER_NOT_AVAIL = define(-45, "PMIX_ERR_SERVER_NOT_AVAIL");
  public static final Status ERR_NOT_FOUND = define(-46, "PMIX_ERR_NOT_FOUND");
  public static final Status ERR_NOT_SUPPORTED = define(-47, "PMIX_ERR_NOT_SUPPORTED");
  public static final Status ERR_NOT_IMPLEMENTED = define(-48, "PMIX_ERR_NOT_IMPLEMENTED");
  public static final Status ERR_COMM_FAILURE = define(-49, "PMIX_ERR_COMM_FAILURE");
  public static final Status ERR_UNPACK_READ_PAST_END_OF_BUFFER =
      define(-50, "PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER");
  public static final Status ERR_CONFLICTING_CLEANUP_DIRECTIVES =
      define(-51, "PMIX_ERR_CONFLICTING_CLEANUP_DIRECTIVES");
  public static final Status ERR_PARTIAL_SUCCESS = define(-52, "PMIX_ERR_PARTIAL_SUCCESS");
  public static final Status ERR_DUPLICATE_KEY = define(-53, "PMIX_ERR_DUPLICATE_KEY");
  public static final Status PROCESS_SET_DEFINE = define(-55, "PMIX_PROCESS_SET_DEFINE");
  public static final Status PROCESS_SET_DELETE = define(-56, "PMIX_PROCESS_SET_DELETE");
  public static final Status READY_FOR_DEBUG = define(-58, "PMIX_READY_FOR_DEBUG");
  public static final Status DEBUG_WAITING_FOR_NOTIFY =
      define(-58, "PMIX_DEBUG_WAITING_FOR_NOTIFY");
  public static final Status ERR_PARAM_VALUE_NOT_SUPPORTED =
      define(-59, "PMIX_ERR_PARAM_VALUE_NOT_SUPPORTED");
  public static final Status ERR_EMPTY = define(-60, "PMIX_ERR_EMPTY");
  public static final Status ERR_LOST_CONNECTION = define(-61, "PMIX_ERR_LOST_CONNECTION");
  public static final Status ERR_EXISTS_OUTSIDE_SCOPE =
      define(-62, "PMIX_ERR_EXISTS_OUTSIDE_SCOPE");
  public static final Status ERR_FATAL = define(-63, "PMIX_ERR_FATAL");
  public static final Status ERR_NOT_AVAILABLE = define(-64, "PMIX_ERR_NOT_AVAILABLE");
  public static final Status ERR_VALUE_OUT_OF_BOUNDS = define(-65, "PMIX_ERR_VALUE_OUT_OF_BOUNDS");
  public static final Status ERR_FILE_OPEN_FAILURE = define(-67, "PMIX_ERR_FILE_OPEN_FAILURE");
  public static final Status ERR_FILE_READ_FAILURE = define(-68, "PMIX_ERR_FILE_READ_FAILURE");
  public static final Status ERR_FILE_WRITE_FAILURE = define(-69, "PMIX_ERR_FILE_WRITE_FAILURE");
  public static final Status ERR_SYS_LIMITS_PIPES = define(-70, "PMIX_ERR_SYS_LIMITS_PIPES");
  public static final Status ERR_SYS_LIMITS_CHILDREN = define(-71, "PMIX_ERR_SYS_LIMITS_CHILDREN");
  public static final Status ERR_PIPE_SETUP_FAILURE = define(-72, "PMIX_ERR_PIPE_SETUP_FAILURE");
  public static final Status ERR_EXE_NOT_ACCESSIBLE = define(-73, "PMIX_ERR_EXE_NOT_ACCESSIBLE");
  public static final Status ERR_JOB_WDIR_NOT_ACCESSIBLE =
      define(-74, "PMIX_ERR_JOB_WDIR_NOT_ACCESSIBLE");
  public static final Status ERR_SYS_LIMITS_FILES = define(-75, "PMIX_ERR_SYS_LIMITS_FILES");
  public static final Status ERR_LOST_CONNECTION_TO_SERVER =
      define(-101, "PMIX_ERR_LOST_CONNECTION_TO_SERVER");
  public static final Status ERR_LOST_PEER_CONNECTION =
      define(-102, "PMIX_ERR_LOST_PEER_CONNECTION");
  public static final Status ERR_LOST_CONNECTION_TO_CLIENT =
      define(-103, "PMIX_ERR_LOST_CONNECTION_TO_CLIENT");
  public static final Status QUERY_PARTIAL_SUCCESS = define(-104, "PMIX_QUERY_PARTIAL_SUCCESS");
  public static final Status NOTIFY_ALLOC_COMPLETE = define(-105, "PMIX_NOTIFY_ALLOC_COMPLETE");
  public static final Status JCTRL_CHECKPOINT = define(-106, "PMIX_JCTRL_CHECKPOINT");
  public static final Status JCTRL_CHECKPOINT_COMPLETE =
      define(-107, "PMIX_JCTRL_CHECKPOINT_COMPLETE");
  public static final Status JCTRL_PREEMPT_ALERT = define(-108, "PMIX_JCTRL_PREEMPT_ALERT");
  public static final Status MONITOR_HEARTBEAT_ALERT = define(-109, "PMIX_MONITOR_HEARTBEAT_ALERT");
  public static final Status MONITOR_FILE_ALERT = define(-110, "PMIX_MONITOR_FILE_ALERT");
  public static final Status PROC_TERMINATED = define(-111, "PMIX_PROC_TERMINATED");
  public static final Status ERR_INVALID_TERMINATION = define(-112, "PMIX_ERR_INVALID_TERMINATION");
  public static final Status FABRIC_UPDATE_ENDPOINTS = define(-113, "PMIX_FABRIC_UPDATE_ENDPOINTS");
  public static final Status ERR_EVENT_REGISTRATION = define(-144, "PMIX_ERR_EVENT_REGISTRATION");
  public static final Status EVENT_JOB_END = define(-145, "PMIX_EVENT_JOB_END");
  public static final Status ERR_JOB_TERMINATED = define(-145, "PMIX_ERR_JOB_TERMINATED");
  public static final Status ERR_UPDATE_ENDPOINTS = define(-146, "PMIX_ERR_UPDATE_ENDPOINTS");
  public static final Status MODEL_DECLARED = define(-147, "PMIX_MODEL_DECLARED");
  public static final Status GDS_ACTION_COMPLETE = define(-148, "PMIX_GDS_ACTION_COMPLETE");
  public static final Status PROC_HAS_CONNECTED = define(-149, "PMIX_PROC_HAS_CONNECTED");
  public static final Status CONNECT_REQUESTED = define(-150, "PMIX_CONNECT_REQUESTED");
  public static final Status MODEL_RESOURCES = define(-151, "PMIX_MODEL_RESOURCES");
  public static final Status OPENMP_PARALLEL_ENTERED = define(-152, "PMIX_OPENMP_PARALLEL_ENTERED");
  public static final Status OPENMP_PARALLEL_EXITED = define(-153, "PMIX_OPENMP_PARALLEL_EXITED");
  public static final Status LAUNCHER_READY = define(-155, "PMIX_LAUNCHER_READY");
  public static final Status OPERATION_IN_PROGRESS = define(-156, "PMIX_OPERATION_IN_PROGRESS");
  public static final Status OPERATION_SUCCEEDED = define(-157, "PMIX_OPERATION_SUCCEEDED");
  public static final Status ERR_INVALID_OPERATION = define(-158, "PMIX_ERR_INVALID_OPERATION");
  public static final Status GROUP_INVITED = define(-159, "PMIX_GROUP_INVITED");
  public static final Status GROUP_LEFT = define(-160, "PMIX_GROUP_LEFT");
  public static final Status GROUP_INVITE_ACCEPTED = define(-161, "PMIX_GROUP_INVITE_ACCEPTED");
  public static final Status GROUP_INVITE_DECLINED = define(-162, "PMIX_GROUP_INVITE_DECLINED");
  public static final Status GROUP_INVITE_FAILED = define(-163, "PMIX_GROUP_INVITE_FAILED");
  public static final Status GROUP_MEMBERSHIP_UPDATE = define(-164, "PMIX_GROUP_MEMBERSHIP_UPDATE");
  public static final Status GROUP_CONSTRUCT_ABORT = define(-165, "PMIX_GROUP_CONSTRUCT_ABORT");
  public static final Status GROUP_CONSTRUCT_COMPLETE =
      define(-166, "PMIX_GROUP_CONSTRUCT_COMPLETE");
  public static final Status GROUP_LEADER_SELECTED = define(-167, "PMIX_GROUP_LEADER_SELECTED");
  public static final Status GROUP_LEADER_FAILED = define(-168, "PMIX_GROUP_LEADER_FAILED");
  public static final Status GROUP_CONTEXT_ID_ASSIGNED =
      define(-169, "PMIX_GROUP_CONTEXT_ID_ASSIGNED");
  public static final Status GROUP_MEMBER_FAILED = define(-170, "PMIX_GROUP_MEMBER_FAILED");
  public static final Status ERR_REPEAT_ATTR_REGISTRATION =
      define(-171, "PMIX_ERR_REPEAT_ATTR_REGISTRATION");
  public static final Status ERR_IOF_FAILURE = define(-172, "PMIX_ERR_IOF_FAILURE");
  public static final Status ERR_IOF_COMPLETE = define(-173, "PMIX_ERR_IOF_COMPLETE");
  public static final Status LAUNCH_COMPLETE = define(-174, "PMIX_LAUNCH_COMPLETE");
  public static final Status FABRIC_UPDATED = define(-175, "PMIX_FABRIC_UPDATED");
  public static final Status FABRIC_UPDATE_PENDING = define(-176, "PMIX_FABRIC_UPDATE_PENDING");
  public static final Status ERR_JOB_APP_NOT_EXECUTABLE =
      define(-177, "PMIX_ERR_JOB_APP_NOT_EXECUTABLE");
  public static final Status ERR_JOB_NO_EXE_SPECIFIED =
      define(-178, "PMIX_ERR_JOB_NO_EXE_SPECIFIED");
  public static final Status ERR_JOB_FAILED_TO_MAP = define(-179, "PMIX_ERR_JOB_FAILED_TO_MAP");
  public static final Status ERR_JOB_CANCELED = define(-180, "PMIX_ERR_JOB_CANCELED");
  public static final Status ERR_JOB_FAILED_TO_LAUNCH =
      define(-181, "PMIX_ERR_JOB_FAILED_TO_LAUNCH");
  public static final Status ERR_JOB_ABORTED = define(-182, "PMIX_ERR_JOB_ABORTED");
  public static final Status ERR_JOB_KILLED_BY_CMD = define(-183, "PMIX_ERR_JOB_KILLED_BY_CMD");
  public static final Status ERR_JOB_ABORTED_BY_SIG = define(-184, "PMIX_ERR_JOB_ABORTED_BY_SIG");
  public static final Status ERR_JOB_TERM_WO_SYNC = define(-185, "PMIX_ERR_JOB_TERM_WO_SYNC");
  public static final Status ERR_JOB_SENSOR_BOUND_EXCEEDED =
      define(-186, "PMIX_ERR_JOB_SENSOR_BOUND_EXCEEDED");
  public static final Status ERR_JOB_NON_ZERO_TERM = define(-187, "PMIX_ERR_JOB_NON_ZERO_TERM");
  public static final Status ERR_JOB_ALLOC_FAILED = define(-188, "PMIX_ERR_JOB_ALLOC_FAILED");
  public static final Status ERR_JOB_ABORTED_BY_SYS_EVENT =
      define(-189, "PMIX_ERR_JOB_ABORTED_BY_SYS_EVENT");
  public static final Status ERR_JOB_EXE_NOT_FOUND = define(-190, "PMIX_ERR_JOB_EXE_NOT_FOUND");
  public static final Status EVENT_JOB_START = define(-191, "PMIX_EVENT_JOB_START");
  public static final Status EVENT_SESSION_START = define(-192, "PMIX_EVENT_SESSION_START");
  public static final Status EVENT_SESSION_END = define(-193, "PMIX_EVENT_SESSION_END");
  public static final Status ERR_PROC_TERM_WO_SYNC = define(-200, "PMIX_ERR_PROC_TERM_WO_SYNC");
  public static final Status EVENT_PROC_TERMINATED = define(-201, "PMIX_EVENT_PROC_TERMINATED");
  public static final Status EVENT_SYS_BASE = define(-230, "PMIX_EVENT_SYS_BASE");
  public static final Status ERR_SYS_BASE = define(-230, "PMIX_ERR_SYS_BASE");
  public static final Status EVENT_NODE_DOWN = define(-231, "PMIX_EVENT_NODE_DOWN");
  public static final Status ERR_NODE_DOWN = define(-231, "PMIX_ERR_NODE_DOWN");
  public static final Status EVENT_NODE_OFFLINE = define(-232, "PMIX_EVENT_NODE_OFFLINE");
  public static final Status ERR_NODE_OFFLINE = define(-232, "PMIX_ERR_NODE_OFFLINE");
  public static final Status ERR_JOB_WDIR_NOT_FOUND = define(-233, "PMIX_ERR_JOB_WDIR_NOT_FOUND");
  public static final Status ERR_JOB_INSUFFICIENT_RESOURCES =
      define(-234, "PMIX_ERR_JOB_INSUFFICIENT_RESOURCES");
  public static final Status ERR_JOB_SYS_OP_FAILED = define(-235, "PMIX_ERR_JOB_SYS_OP_FAILED");
  public static final Status EVENT_SYS_OTHER = define(-330, "PMIX_EVENT_SYS_OTHER");
  public static final Status ERR_SYS_OTHER = define(-330, "PMIX_ERR_SYS_OTHER");
  public static final Status EVENT_NO_ACTION_TAKEN = define(-331, "PMIX_EVENT_NO_ACTION_TAKEN");
  public static final Status EVENT_PARTIAL_ACTION_TAKEN =
      define(-332, "PMIX_EVENT_PARTIAL_ACTION_TAKEN");
  public static final Status EVENT_ACTION_DEFERRED = define(-333, "PMIX_EVENT_ACTION_DEFERRED");
  public static final Status EVENT_ACTION_COMPLETE = define(-334, "PMIX_EVENT_ACTION_COMPLETE");
  public static final Status ERR_PROC_KILLED_BY_CMD = define(-400, "PMIX_ERR_PROC_KILLED_BY_CMD");
  public static final Status ERR_PROC_FAILED_TO_START =
      define(-401, "PMIX_ERR_PROC_FAILED_TO_START");
  public static final Status ERR_PROC_ABORTED_BY_SIG = define(-402, "PMIX_ERR_PROC_ABORTED_BY_SIG");
  public static final Status ERR_PROC_SENSOR_BOUND_EXCEEDED =
      define(-403, "PMIX_ERR_PROC_SENSOR_BOUND_EXCEEDED");
  public static final Status ERR_EXIT_NONZERO_TERM = define(-404, "PMIX_ERR_EXIT_NONZERO_TERM");
  public static final Status EXTERNAL_ERR_BASE = define(-3000, "PMIX_EXTERNAL_ERR_BASE");
  // END GENERATED

  /** The status with this code: a named constant when 4.2.2 defines one, else an unnamed status. */
  public static Status of(int code) {
    Status s = BY_CODE.get(code);
    return s != null ? s : new Status(code, null);
  }

  /** The status with this C name ({@code PMIX_ERR_NOT_FOUND}), if 4.2.2 defines it. */
  public static Optional<Status> forName(String name) {
    return Optional.ofNullable(ByName.MAP.get(name));
  }

  /** The raw {@code pmix_status_t} value. */
  public int code() {
    return code;
  }

  /** The C name, or {@code "UNKNOWN(<code>)"} for a code 4.2.2 does not define. */
  public String name() {
    return name != null ? name : "UNKNOWN(" + code + ")";
  }

  /** Whether OpenPMIx 4.2.2 defines this code. */
  public boolean isKnown() {
    return name != null;
  }

  /** Whether this is {@code PMIX_SUCCESS}. */
  public boolean isSuccess() {
    return code == 0;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Status s && s.code == code;
  }

  @Override
  public int hashCode() {
    return code;
  }

  @Override
  public String toString() {
    return name() + (name != null ? "(" + code + ")" : "");
  }
}
