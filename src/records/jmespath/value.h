// The values JMESPath expressions produce: JSON values, either owned or borrowed from a parsed
// simdjson document.
//
// A borrowed value is a view into a `simdjson::dom::document`: it copies nothing and is valid
// only while that document lives (for a RecordMapper, until its next Apply). Values built by
// functions, projections and multi-selects are owned; arrays and objects are shared immutable
// payloads, so copying a Value never copies its elements.
//
// Threading: a Value is immutable; owned values may be shared across threads, borrowed ones
// live as long as the document of the thread that parsed it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <simdjson.h>

#include "base/status.h"

namespace weir::records::jmespath {

enum class Type : uint8_t { kNull, kBoolean, kNumber, kString, kArray, kObject };

// The JMESPath name of a type: "null", "boolean", "number", "string", "array", "object".
std::string_view TypeName(Type type);

class Value;
using Array = std::vector<Value>;
using Member = std::pair<std::string, Value>;
using Object = std::vector<Member>;  // in insertion order, keys unique

class Value {
 public:
  Value() = default;  // null
  static Value Boolean(bool value) { return Value(Payload(value)); }
  static Value Integer(int64_t value) { return Value(Payload(value)); }
  static Value Double(double value) { return Value(Payload(value)); }
  static Value String(std::string value) { return Value(Payload(std::move(value))); }
  static Value FromArray(Array elements);
  // `members` must have unique keys.
  static Value FromObject(Object members);
  // A view of `element`; valid while its document lives.
  static Value Borrowed(simdjson::dom::element element) { return Value(Payload(element)); }

  Type type() const {
    switch (payload_.index()) {
      case 0:
        return Type::kNull;
      case 1:
        return Type::kBoolean;
      case 2:
      case 3:
        return Type::kNumber;
      case 4:
        return Type::kString;
      case kArray:
        return Type::kArray;
      case kObject:
        return Type::kObject;
      default:
        return DomType(std::get<kDom>(payload_));
    }
  }
  bool is_null() const { return type() == Type::kNull; }
  bool is_number() const { return type() == Type::kNumber; }
  bool is_string() const { return type() == Type::kString; }
  bool is_array() const { return type() == Type::kArray; }
  bool is_object() const { return type() == Type::kObject; }
  // A borrowed view of a document (of any type).
  bool is_borrowed() const { return payload_.index() == kDom; }

  // Only for the matching type.
  bool boolean() const;
  // Numbers that are integers within int64 are kept exactly; others are doubles.
  bool is_integer() const;
  int64_t integer() const;
  double number() const;  // any number as a double
  std::string_view string() const;

  // Arrays and objects: the count of elements or members.
  size_t size() const;
  // Array element `index` (0 <= index < size()).
  Value At(size_t index) const;
  // The elements of an array, appended to `out`.
  void AppendElements(std::vector<Value>* out) const;
  // The elements of an array.
  std::vector<Value> Elements() const;
  // Calls visit(Value element) for each element of an array, in order.
  template <typename Visit>
  void ForEachElement(Visit&& visit) const;
  // The member of an object called `key`, or null.
  Value Find(std::string_view key) const;
  // Calls visit(std::string_view key, Value value) for each member of an object, in order.
  template <typename Visit>
  void ForEachMember(Visit&& visit) const;

  // False for null, false, "", [] and {}; true otherwise (0 is true).
  bool Truthy() const;
  // A deep copy that borrows nothing.
  Value Owned() const;

  // The simdjson element of a borrowed value.
  simdjson::dom::element element() const { return std::get<kDom>(payload_); }

 private:
  using ArrayPtr = std::shared_ptr<const Array>;
  using ObjectPtr = std::shared_ptr<const Object>;
  using Payload = std::variant<std::monostate, bool, int64_t, double, std::string, ArrayPtr,
                               ObjectPtr, simdjson::dom::element>;
  static constexpr size_t kArray = 5;
  static constexpr size_t kObject = 6;
  static constexpr size_t kDom = 7;

  explicit Value(Payload payload) : payload_(std::move(payload)) {}

  static Type DomType(simdjson::dom::element element) {
    switch (element.type()) {
      case simdjson::dom::element_type::ARRAY:
        return Type::kArray;
      case simdjson::dom::element_type::OBJECT:
        return Type::kObject;
      case simdjson::dom::element_type::STRING:
        return Type::kString;
      case simdjson::dom::element_type::BOOL:
        return Type::kBoolean;
      case simdjson::dom::element_type::NULL_VALUE:
        return Type::kNull;
      default:
        return Type::kNumber;  // INT64, UINT64, DOUBLE
    }
  }

  Payload payload_;
};

// JMESPath equality: deep, numbers by value, objects regardless of member order.
bool Equal(const Value& a, const Value& b);
// Order of two numbers or two strings (by code point); <0, 0 or >0.
int Compare(const Value& a, const Value& b);

// Compact JSON text of `value` (no spaces), as `to_string` returns it.
std::string ToJson(const Value& value);
void AppendJson(const Value& value, std::string* out);
// Parses JSON text into an owned value; a bad-data error naming the problem otherwise.
Result<Value> ParseJson(std::string_view text);

template <typename Visit>
void Value::ForEachElement(Visit&& visit) const {
  if (payload_.index() == kArray) {
    for (const Value& element : *std::get<kArray>(payload_)) visit(element);
  } else if (payload_.index() == kDom) {
    simdjson::dom::array array;
    if (std::get<kDom>(payload_).get_array().get(array) != simdjson::SUCCESS) return;
    for (simdjson::dom::element element : array) visit(Value::Borrowed(element));
  }
}

template <typename Visit>
void Value::ForEachMember(Visit&& visit) const {
  if (payload_.index() == kObject) {
    for (const Member& member : *std::get<kObject>(payload_)) visit(member.first, member.second);
  } else if (payload_.index() == kDom) {
    simdjson::dom::object object;
    if (std::get<kDom>(payload_).get_object().get(object) != simdjson::SUCCESS) return;
    for (auto field : object) visit(field.key, Value::Borrowed(field.value));
  }
}

}  // namespace weir::records::jmespath
