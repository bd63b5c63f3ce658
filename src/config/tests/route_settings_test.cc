// A dataset's metadata columns and routing settings (issue 14): loaded from YAML and WEIR_
// variables, and every invalid combination stops loading naming the setting.
#include <gtest/gtest.h>

#include "config/load.h"
#include "ingest_env.h"

namespace weir::config {
namespace {

using test_env::Env;
using test_env::Load;

TEST(RouteSettings, MetadataColumnsAndRoutingLoadFromVariables) {
  auto loaded = Load({{"WEIR_METADATA_COLUMNS", "kafka_offset:offset,trace:header.trace-id"},
                      {"WEIR_ROUTE_TEMPLATE", "events_{event}"},
                      {"WEIR_ROUTE_ALLOW", "events_click,events_view"},
                      {"WEIR_ROUTE_MAX_TABLES", "5"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const DatasetSettings& d = loaded->settings.datasets.at(0);
  EXPECT_EQ(d.metadata_columns,
            (std::vector<std::string>{"kafka_offset:offset", "trace:header.trace-id"}));
  EXPECT_EQ(d.route.template_text, "events_{event}");
  EXPECT_EQ(d.route.allow, (std::vector<std::string>{"events_click", "events_view"}));
  EXPECT_EQ(d.route.max_tables, 5);
}

TEST(RouteSettings, EveryInvalidCombinationStopsLoadingNamingTheSetting) {
  const std::vector<std::pair<Env, std::string>> cases = {
      {{{"WEIR_METADATA_COLUMNS", "k:keys"}}, "metadata_columns: \"k:keys\": unknown source"},
      {{{"WEIR_METADATA_COLUMNS", "_inserted_at:offset"}}, "metadata_columns: \"_inserted_at"},
      {{{"WEIR_METADATA_COLUMNS", "Ts:timestamp"}, {"WEIR_TYPED_COLUMNS", "ts:timestamptz"}},
       "metadata_columns: column \"Ts\" is also a typed column \"ts\""},
      {{{"WEIR_METADATA_COLUMNS", "user:key"}, {"WEIR_MAPPING_USER", "properties.user"}},
       "metadata_columns: column \"user\" is also a mapping column \"user\""},
      {{{"WEIR_ROUTE_TEMPLATE", "events"}}, "route.template: \"events\" has no {field}"},
      {{{"WEIR_ROUTE_TEMPLATE", "e-{event}"}}, "route.template: \"e-{event}\": the text around"},
      {{{"WEIR_ROUTE_ALLOW", "events_click"}}, "route.allow: is set without route.template"},
      {{{"WEIR_ROUTE_TEMPLATE", "e_{event}"}, {"WEIR_ROUTE_ALLOW", "e_a,e-b"}},
       "route.allow: value \"e-b\" is not a table name"},
      {{{"WEIR_ROUTE_TEMPLATE", "e_{event}"},
        {"WEIR_ROUTE_ALLOW", "e_a,e_b,e_c"},
        {"WEIR_ROUTE_MAX_TABLES", "2"}},
       "route.max_tables: value \"2\" is below the 3 names of route.allow"},
      {{{"WEIR_ROUTE_TEMPLATE", "e_{event}"}, {"WEIR_MAPPING_USER", "properties.user"}},
       "route.template: routes by \"event\", which is neither a mapping column nor a metadata"},
      {{{"WEIR_ROUTE_MAX_TABLES", "0"}}, "route.max_tables"},
  };
  for (const auto& [env, message] : cases) {
    auto bad = Load(env);
    ASSERT_FALSE(bad.ok()) << message;
    EXPECT_NE(bad.status().message().find(message), std::string::npos) << bad.status().message();
  }
  // Routing a mapped dataset by a metadata column is fine.
  auto ok = Load({{"WEIR_ROUTE_TEMPLATE", "e_{kind}"},
                  {"WEIR_MAPPING_USER", "properties.user"},
                  {"WEIR_METADATA_COLUMNS", "kind:header.kind"}});
  EXPECT_TRUE(ok.ok()) << ok.status().message();
}

}  // namespace
}  // namespace weir::config
