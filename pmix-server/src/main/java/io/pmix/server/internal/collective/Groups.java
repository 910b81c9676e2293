package io.pmix.server.internal.collective;

import static java.util.Objects.requireNonNull;

import io.pmix.common.Proc;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.jspecify.annotations.Nullable;

/**
 * The process groups this server has constructed and not yet destructed ({@code
 * pmix_server_globals.groups} in 4.2.2): each group's members and context id. 4.2.2's clients
 * destruct a group by its id alone, so the server must know the members then; later clients send
 * them, and the record is what the server answers about its groups. A group naming a namespace
 * that is deregistered goes with it. Progress thread only.
 */
final class Groups {
  /** One constructed group. */
  record Group(String id, List<Proc> members, OptionalLong contextId) {
    Group {
      requireNonNull(id, "id");
      members = List.copyOf(members);
      requireNonNull(contextId, "contextId");
    }
  }

  private final Map<String, Group> groups = new LinkedHashMap<>();

  /** Records a constructed group (a second construct of the same id replaces the first). */
  void constructed(Group g) {
    groups.put(g.id(), g);
  }

  /** The group of this id, or null. */
  @Nullable Group get(String id) {
    return groups.get(id);
  }

  /** Forgets a destructed group. */
  void destructed(String id) {
    groups.remove(id);
  }

  /** Forgets every group with a member in {@code nspace}, which was deregistered. */
  void namespaceGone(String nspace) {
    // Loops, not removeIf and a stream: this runs at every job's end, on the progress thread,
    // where a fresh JVM links each lambda once (docs/architecture.md, "Start-up of pmixrun").
    for (Iterator<Group> it = groups.values().iterator(); it.hasNext(); ) {
      for (Proc p : it.next().members()) {
        if (p.nspace().equals(nspace)) {
          it.remove();
          break;
        }
      }
    }
  }

  /** The groups, in construction order. */
  List<Group> all() {
    return List.copyOf(groups.values());
  }
}
