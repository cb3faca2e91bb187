#ifndef LIVEBRIDGE_CYAML_SHIM_H
#define LIVEBRIDGE_CYAML_SHIM_H
// libyaml imports cleanly; this header only names it for the module map.
#include <yaml.h>

/// The version string, for diagnostics.
static inline const char *cyaml_version(void) { return yaml_get_version_string(); }

#endif
