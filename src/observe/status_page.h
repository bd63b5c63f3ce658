// The status page and its JSON twin, rendered from one StatusSnapshot: /status (HTML with
// inline SVG charts, no script, no external reference) and /status.json. Every text that comes
// from configuration or from clients (dataset, topic, reason, statement, user) is escaped.
// Elements carrying a number have stable ids and `data-field` attributes (each dataset's
// section `data-dataset`), which the browser test reads.
// Pure functions; safe from any thread.
#pragma once

#include <string>

#include "observe/status_model.h"

namespace weir::observe {

// The Content-Security-Policy /status is served with: nothing loads, inline styles and data:
// images only.
inline constexpr const char* kStatusPageCsp =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'";

// The page; `refresh_seconds` > 0 adds a meta refresh.
std::string RenderStatusHtml(const StatusSnapshot& status, int refresh_seconds);

// The same data as JSON (layout in src/observe/README.md).
std::string RenderStatusJson(const StatusSnapshot& status);

}  // namespace weir::observe
