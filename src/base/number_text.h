// Text forms of numbers shared by every stage that renders values (promotion to varchar,
// catalog statistics), so one value always reads the same.
#pragma once

#include <string>

namespace weir {

// The shortest decimal text that reads back to exactly `value` ("0.5", "1e+300", "-0").
std::string ShortestText(double value);

}  // namespace weir
