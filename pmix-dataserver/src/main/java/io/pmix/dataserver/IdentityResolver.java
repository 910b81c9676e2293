package io.pmix.dataserver;

import static java.util.Objects.requireNonNull;

import io.pmix.common.Info;
import io.pmix.common.Keys;
import io.pmix.common.PmixException;
import io.pmix.common.Proc;
import io.pmix.common.Status;
import io.pmix.common.Value;
import io.pmix.dataserver.internal.Directives;
import java.util.List;
import java.util.function.ToIntFunction;

/**
 * Turns the caller of a publish, lookup or unpublish upcall into the {@link Identity} the store
 * decides by. A host supplies one that knows its processes (their uid and gid as the server
 * authenticated them, their application and session); {@link #fromServerInfo} is the common case.
 * Called on the host executor; must be thread-safe.
 */
@FunctionalInterface
public interface IdentityResolver {
  /**
   * The identity of {@code proc}.
   *
   * @param info the upcall's info array, which carries what the server appended ({@code
   *     pmix.euid}, and {@code pmix.egid} when it gives one)
   * @throws PmixException with the status the caller gets when it cannot be identified
   */
  Identity resolve(Proc proc, List<Info> info);

  /**
   * Reads the uid from the {@code pmix.euid} entry and the gid from {@code pmix.egid} (unknown when
   * absent) that the PMIx server appends to the upcall's info, and takes the application and
   * session from the host. A caller with no {@code pmix.euid} is refused with {@code
   * PMIX_ERR_NO_PERMISSIONS}.
   *
   * <p>This trusts the server to append the uid and gid it <em>authenticated</em> (the socket peer
   * credentials of the connection), not the uid a client message claims; a host whose server
   * cannot promise that should resolve identities from its own records instead.
   *
   * @param node this server's name, for {@code PMIX_RANGE_LOCAL}
   * @param appNumber the application number of a process ({@link Identity#UNKNOWN} if not known)
   * @param sessionId the session of a process ({@link Identity#UNKNOWN} for the default one)
   */
  static IdentityResolver fromServerInfo(
      String node, ToIntFunction<Proc> appNumber, ToIntFunction<Proc> sessionId) {
    requireNonNull(node, "node");
    requireNonNull(appNumber, "appNumber");
    requireNonNull(sessionId, "sessionId");
    return (proc, info) -> {
      Value uid = Directives.find(info, Keys.USERID.name());
      if (uid == null) {
        throw new PmixException(Status.ERR_NO_PERMISSIONS, "the server gave no uid for " + proc);
      }
      Value gid = Directives.find(info, Keys.GRPID.name());
      return new Identity(
          proc,
          id(uid),
          gid == null ? Identity.UNKNOWN : id(gid),
          appNumber.applyAsInt(proc),
          sessionId.applyAsInt(proc),
          node);
    };
  }

  /** {@link #fromServerInfo(String, ToIntFunction, ToIntFunction)} with every process in app 0 of the default session. */
  static IdentityResolver fromServerInfo(String node) {
    return fromServerInfo(node, p -> 0, p -> Identity.UNKNOWN);
  }

  private static int id(Value v) {
    if (v instanceof Value.UInt u && u.value() >= 0 && u.value() <= 0xFFFF_FFFFL) {
      return (int) u.value();
    }
    if (v instanceof Value.Int i && i.value() >= 0 && i.value() <= 0xFFFF_FFFFL) {
      return (int) i.value();
    }
    throw new PmixException(Status.ERR_BAD_PARAM, "not a uid or gid: " + v);
  }
}
