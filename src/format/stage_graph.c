/* SPDX-License-Identifier: MIT */
/*
** Reading the stage graph (docs/DESIGN.md, "Stage graph"), the output of
** `parplan partition -o` (part_write.c writes it) and the input of
** `parplan map`.
**
**   {"stages": [{"name", "compute_ms", "param_bytes"}, ...],
**    "edges": [{"from", "to", "bytes"}, ...]}
**
** Stages are referred to by index or name; every number must be finite
** and >= 0; an edge from a stage to itself, an unknown stage and a
** duplicate name are errors naming the file and the element.
*/
#include "format/json.h"
#include "map/map.h"

#include <math.h>
#include <string.h>

/* An edge's end: an index, or a name looked up in names (a hash map:
** a linear search made 64k-stage graphs quadratic, issue 22). */
static pp_status stage_ref(pp_ctx *ctx, const char *src, const char *where,
                           const struct pp_stage_graph *g,
                           const struct ppi_strmap *names, const json_t *v,
                           int32_t *out)
{
  int32_t s;
  if (json_is_integer(v)) {
    json_int_t i = json_integer_value(v);
    if (i < 0 || i >= g->S)
      return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                         "%s: stage index %lld is out of range (%d stages)",
                         where, (long long)i, (int)g->S);
    *out = (int32_t)i;
    return PP_OK;
  }
  if (json_is_string(v)) {
    if ((s = ppi_strmap_get(names, json_string_value(v))) >= 0) {
      *out = s;
      return PP_OK;
    }
    return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0, "%s: no stage named '%s'",
                       where, json_string_value(v));
  }
  return ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                     "%s: a stage must be an index or a name, not %s", where,
                     ppi_json_type(v));
}

pp_status pp_stage_graph_read_json(pp_ctx *ctx, const char *text, size_t len,
                                   const char *source, pp_stage_graph **out)
{
  struct pp_stage_graph *g;
  json_t *root, *st, *ed;
  const char *src = source ? source : "stage graph";
  struct ppi_strmap names;
  size_t i;
  pp_status rc;

  if (!ctx || !text || !out)
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_stage_graph_read_json: NULL")
               : PP_EINVAL;
  *out = NULL;
  ppi_strmap_init(&names);
  if (!(root = ppi_json_parse(ctx, text, len, src)))
    return PP_EPARSE;
  if (!(g = ppi_calloc(ctx, 1, sizeof *g))) {
    json_decref(root);
    return PP_ENOMEM;
  }
  ppi_arena_init(&g->arena, ppi_ctx_alloc(ctx));
  if ((rc = ppi_jarr(ctx, src, "stage graph", root, "stages", true, &st)) ||
      (rc = ppi_jarr(ctx, src, "stage graph", root, "edges", false, &ed)))
    goto done;
  if (json_array_size(st) == 0) {
    rc = ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                     "stage graph: \"stages\" is empty");
    goto done;
  }
  if (json_array_size(st) > PPI_MAX_GRAPH_STAGES ||
      (ed && json_array_size(ed) >
                 (size_t)PPI_MAX_GRAPH_STAGES * PPI_GRAPH_EDGES_PER_STAGE)) {
    rc = ppi_fail_at(ctx, PP_ELIMIT, src, 0, 0,
                     "stage graph: more than %d stages or %d edges",
                     PPI_MAX_GRAPH_STAGES,
                     PPI_MAX_GRAPH_STAGES * PPI_GRAPH_EDGES_PER_STAGE);
    goto done;
  }
  g->S = (int32_t)json_array_size(st);
  g->ne = ed ? (int32_t)json_array_size(ed) : 0;
  if (!(g->source = ppi_arena_name(&g->arena, ctx, src)) ||
      !(g->name =
            ppi_arena_alloc(&g->arena, ctx, (size_t)g->S, sizeof *g->name)) ||
      !(g->compute = ppi_arena_alloc(&g->arena, ctx, (size_t)g->S,
                                     sizeof *g->compute)) ||
      !(g->param =
            ppi_arena_alloc(&g->arena, ctx, (size_t)g->S, sizeof *g->param)) ||
      !(g->from = ppi_arena_alloc(&g->arena, ctx, (size_t)(g->ne ? g->ne : 1),
                                  sizeof *g->from)) ||
      !(g->to = ppi_arena_alloc(&g->arena, ctx, (size_t)(g->ne ? g->ne : 1),
                                sizeof *g->to)) ||
      !(g->bytes = ppi_arena_alloc(&g->arena, ctx, (size_t)(g->ne ? g->ne : 1),
                                   sizeof *g->bytes))) {
    rc = PP_ENOMEM;
    goto done;
  }
  for (i = 0; i < (size_t)g->S; i++) {
    json_t *o;
    char w[64];
    const char *name = NULL;
    snprintf(w, sizeof w, "stage %zu", i);
    if ((rc = ppi_jobj_at(ctx, src, "stages", st, i, &o)) ||
        (rc = ppi_jstr(ctx, src, w, o, "name", false, &name)) ||
        (rc = ppi_jnum(ctx, src, w, o, "compute_ms", true, 0, 0, 1e15,
                       &g->compute[i])) ||
        (rc = ppi_jnum(ctx, src, w, o, "param_bytes", false, 0, 0, 1e18,
                       &g->param[i])))
      goto done;
    if (name)
      g->name[i] = ppi_arena_strdup(&g->arena, ctx, name);
    else {
      char buf[32];
      snprintf(buf, sizeof buf, "stage%zu", i);
      g->name[i] = ppi_arena_strdup(&g->arena, ctx, buf);
    }
    if (!g->name[i]) {
      rc = PP_ENOMEM;
      goto done;
    }
    { /* a duplicate keeps its first stage here; the check names it */
      int32_t old;
      rc = ppi_strmap_put(ctx, &names, g->name[i], (int32_t)i, &old);
      if (rc == PP_EINVAL)
        rc = PP_OK;
      else if (rc)
        goto done;
    }
  }
  for (i = 0; i < (size_t)g->ne; i++) {
    json_t *o;
    char w[64];
    snprintf(w, sizeof w, "edge %zu", i);
    if ((rc = ppi_jobj_at(ctx, src, "edges", ed, i, &o)))
      goto done;
    if (!json_object_get(o, "from") || !json_object_get(o, "to")) {
      rc = ppi_fail_at(ctx, PP_EINPUT, src, 0, 0,
                       "%s: needs \"from\" and \"to\"", w);
      goto done;
    }
    if ((rc = stage_ref(ctx, src, w, g, &names, json_object_get(o, "from"),
                        &g->from[i])) ||
        (rc = stage_ref(ctx, src, w, g, &names, json_object_get(o, "to"),
                        &g->to[i])) ||
        (rc =
             ppi_jnum(ctx, src, w, o, "bytes", true, 0, 0, 1e18, &g->bytes[i])))
      goto done;
  }
  if ((rc = ppi_stage_graph_check(ctx, g)))
    goto done;
  *out = g;
  g = NULL;
done:
  ppi_strmap_free(ctx, &names);
  json_decref(root);
  pp_stage_graph_destroy(g);
  return rc;
}

pp_status pp_stage_graph_load(pp_ctx *ctx, const char *path,
                              pp_stage_graph **out)
{
  char *text;
  size_t len;
  pp_status rc;
  if (!ctx || !path || !out)
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_stage_graph_load: NULL")
               : PP_EINVAL;
  *out = NULL;
  if ((rc = ppi_read_file(ctx, path, &text, &len)))
    return rc;
  rc = pp_stage_graph_read_json(ctx, text, len, path, out);
  ppi_free(ctx, text, len + 1);
  return rc;
}
