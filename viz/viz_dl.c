/* viz_dl.c - shared libraries loaded when first used: cgraph (dot) and, through the same loader, libcurl */
/* SPDX-License-Identifier: MIT */
#include <dlfcn.h>
#include <string.h>

#include "viz/viz_int.h"

int bb_viz_dl_load(void **lib, const char *soname, const char *pkg, const struct bb_viz_sym *syms,
                   size_t n, struct bb_err *err)
{
	if (*lib)
		return 0;
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *why = dlerror();
		bb_err_set(err, "cannot load %s (install %s): %s", soname, pkg,
		           why ? why : "unknown error");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		/* dlsym's object pointer stored as the function or data pointer
		 * it is (POSIX allows it for functions) */
		void *p = dlsym(h, syms[i].name);
		if (!p) {
			bb_err_set(err, "%s lacks %s, which bb needs", soname, syms[i].name);
			dlclose(h);
			return -1;
		}
		memcpy(syms[i].slot, &p, sizeof(p));
	}
	*lib = h;
	return 0;
}

/* cgraph is loaded when the first graph is made: linked, libcgraph and libcdt
 * are mapped and relocated at every start of bbnest and bbconv, 0.4-0.7 ms of
 * the 11 ms bbnest --json takes for table1-short on the project's machine,
 * though only dot output uses them. BB_LIBCGRAPH is the soname of the
 * library the headers came with (viz/CMakeLists.txt). */

static struct bb_viz_cg cg;
static void *cg_lib;

const struct bb_viz_cg *bb_viz_cgraph(struct bb_err *err)
{
	if (cg_lib)
		return &cg;
	const struct bb_viz_sym syms[] = {
	    {"agopen", &cg.agopen},         {"agclose", &cg.agclose},
	    {"agnode", &cg.agnode},         {"agedge", &cg.agedge},
	    {"agsubg", &cg.agsubg},         {"agattr", &cg.agattr},
	    {"agsafeset", &cg.agsafeset},   {"agstrdup", &cg.agstrdup},
	    {"agstrfree", &cg.agstrfree},   {"agwrite", &cg.agwrite},
	    {"Agdirected", &cg.Agdirected}, {"AgIdDisc", &cg.AgIdDisc},
	    {"AgIoDisc", &cg.AgIoDisc},     {"AgMemDisc", &cg.AgMemDisc},
	};
	if (bb_viz_dl_load(&cg_lib, BB_LIBCGRAPH, "Graphviz's libcgraph", syms,
	                   sizeof(syms) / sizeof(syms[0]), err) != 0) {
		memset(&cg, 0, sizeof(cg));
		return NULL;
	}
	return &cg;
}
