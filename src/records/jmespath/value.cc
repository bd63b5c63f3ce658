#include "records/jmespath/value.h"

#include <cstdio>
#include <limits>

#include "base/check.h"
#include "base/number_text.h"

namespace weir::records::jmespath {
namespace dom = simdjson::dom;

std::string_view TypeName(Type type) {
  switch (type) {
    case Type::kNull:
      return "null";
    case Type::kBoolean:
      return "boolean";
    case Type::kNumber:
      return "number";
    case Type::kString:
      return "string";
    case Type::kArray:
      return "array";
    case Type::kObject:
      return "object";
  }
  return "unknown";
}

Value Value::FromArray(Array elements) {
  return Value(Payload(std::make_shared<const Array>(std::move(elements))));
}

Value Value::FromObject(Object members) {
  return Value(Payload(std::make_shared<const Object>(std::move(members))));
}

bool Value::boolean() const {
  if (payload_.index() == 1) return std::get<1>(payload_);
  return element().get_bool().value_unsafe();
}

bool Value::is_integer() const {
  if (payload_.index() == 2) return true;
  if (payload_.index() != kDom) return false;
  return element().type() == dom::element_type::INT64;
}

int64_t Value::integer() const {
  if (payload_.index() == 2) return std::get<2>(payload_);
  return element().get_int64().value_unsafe();
}

double Value::number() const {
  switch (payload_.index()) {
    case 2:
      return static_cast<double>(std::get<2>(payload_));
    case 3:
      return std::get<3>(payload_);
    default:
      break;
  }
  const dom::element e = element();
  switch (e.type()) {
    case dom::element_type::INT64:
      return static_cast<double>(e.get_int64().value_unsafe());
    case dom::element_type::UINT64:
      return static_cast<double>(e.get_uint64().value_unsafe());
    default:
      return e.get_double().value_unsafe();
  }
}

std::string_view Value::string() const {
  if (payload_.index() == 4) return std::get<4>(payload_);
  return element().get_string().value_unsafe();
}

size_t Value::size() const {
  switch (payload_.index()) {
    case kArray:
      return std::get<kArray>(payload_)->size();
    case kObject:
      return std::get<kObject>(payload_)->size();
    case kDom: {
      const dom::element e = element();
      dom::array array;
      if (e.get_array().get(array) == simdjson::SUCCESS) return array.size();
      dom::object object;
      if (e.get_object().get(object) == simdjson::SUCCESS) return object.size();
      return 0;
    }
    default:
      return 0;
  }
}

Value Value::At(size_t index) const {
  if (payload_.index() == kArray) return (*std::get<kArray>(payload_))[index];
  dom::element inner;
  if (element().at(index).get(inner) != simdjson::SUCCESS) return Value();
  return Borrowed(inner);
}

std::vector<Value> Value::Elements() const {
  std::vector<Value> elements;
  elements.reserve(size());
  AppendElements(&elements);
  return elements;
}

void Value::AppendElements(std::vector<Value>* out) const {
  if (payload_.index() == kArray) {
    const Array& elements = *std::get<kArray>(payload_);
    out->insert(out->end(), elements.begin(), elements.end());
  } else if (payload_.index() == kDom) {
    dom::array array;
    if (element().get_array().get(array) != simdjson::SUCCESS) return;
    for (dom::element inner : array) out->push_back(Borrowed(inner));
  }
}

Value Value::Find(std::string_view key) const {
  if (payload_.index() == kObject) {
    for (const Member& member : *std::get<kObject>(payload_)) {
      if (member.first == key) return member.second;
    }
  } else if (payload_.index() == kDom) {
    dom::object object;
    if (element().get_object().get(object) != simdjson::SUCCESS) return Value();
    dom::element inner;
    if (object.at_key(key).get(inner) == simdjson::SUCCESS) return Borrowed(inner);
  }
  return Value();
}

bool Value::Truthy() const {
  switch (type()) {
    case Type::kNull:
      return false;
    case Type::kBoolean:
      return boolean();
    case Type::kNumber:
      return true;
    case Type::kString:
      return !string().empty();
    case Type::kArray:
    case Type::kObject:
      return size() != 0;
  }
  return false;
}

Value Value::Owned() const {
  if (payload_.index() != kDom) return *this;
  switch (type()) {
    case Type::kNull:
      return Value();
    case Type::kBoolean:
      return Boolean(boolean());
    case Type::kNumber:
      return is_integer() ? Integer(integer()) : Double(number());
    case Type::kString:
      return String(std::string(string()));
    case Type::kArray: {
      Array elements;
      AppendElements(&elements);
      for (Value& element : elements) element = element.Owned();
      return FromArray(std::move(elements));
    }
    case Type::kObject: {
      Object members;
      ForEachMember([&members](std::string_view key, const Value& value) {
        bool seen = false;  // a repeated key: the first wins, as in Find
        for (const Member& member : members) seen = seen || member.first == key;
        if (!seen) members.emplace_back(std::string(key), value.Owned());
      });
      return FromObject(std::move(members));
    }
  }
  return Value();
}

namespace {

bool HasMember(const Value& object, std::string_view key, Value* out) {
  bool found = false;
  object.ForEachMember([&](std::string_view name, const Value& value) {
    if (!found && name == key) {
      *out = value;
      found = true;
    }
  });
  return found;
}

}  // namespace

bool Equal(const Value& a, const Value& b) {
  const Type type = a.type();
  if (type != b.type()) return false;
  switch (type) {
    case Type::kNull:
      return true;
    case Type::kBoolean:
      return a.boolean() == b.boolean();
    case Type::kNumber:
      return Compare(a, b) == 0;
    case Type::kString:
      return a.string() == b.string();
    case Type::kArray: {
      const size_t size = a.size();
      if (size != b.size()) return false;
      std::vector<Value> left;
      std::vector<Value> right;
      a.AppendElements(&left);
      b.AppendElements(&right);
      for (size_t i = 0; i < size; ++i) {
        if (!Equal(left[i], right[i])) return false;
      }
      return true;
    }
    case Type::kObject: {
      if (a.size() != b.size()) return false;
      bool equal = true;
      a.ForEachMember([&](std::string_view key, const Value& value) {
        Value other;
        if (equal) equal = HasMember(b, key, &other) && Equal(value, other);
      });
      return equal;
    }
  }
  return false;
}

int Compare(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_integer() && b.is_integer()) {
      const int64_t x = a.integer();
      const int64_t y = b.integer();
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    const double x = a.number();
    const double y = b.number();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  WEIR_CHECK(a.is_string() && b.is_string());
  const int order = a.string().compare(b.string());  // UTF-8 bytes order as code points do
  return order < 0 ? -1 : (order > 0 ? 1 : 0);
}

namespace {

void AppendQuoted(std::string_view text, std::string* out) {
  out->push_back('"');
  size_t run = 0;  // start of the characters not yet appended
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c != '"' && c != '\\' && static_cast<unsigned char>(c) >= 0x20) continue;
    out->append(text.substr(run, i - run));
    run = i + 1;
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      default: {
        char escape[8];
        std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned>(c));
        out->append(escape);
      }
    }
  }
  out->append(text.substr(run));
  out->push_back('"');
}

}  // namespace

void AppendJson(const Value& value, std::string* out) {
  switch (value.type()) {
    case Type::kNull:
      out->append("null");
      return;
    case Type::kBoolean:
      out->append(value.boolean() ? "true" : "false");
      return;
    case Type::kNumber:
      if (value.is_integer()) {
        out->append(std::to_string(value.integer()));
      } else if (const double d = value.number(); d - d == 0) {
        out->append(ShortestText(d));
      } else {
        out->append("null");  // JSON has no infinities or NaN
      }
      return;
    case Type::kString:
      AppendQuoted(value.string(), out);
      return;
    case Type::kArray: {
      out->push_back('[');
      std::vector<Value> elements;
      value.AppendElements(&elements);
      for (size_t i = 0; i < elements.size(); ++i) {
        if (i > 0) out->push_back(',');
        AppendJson(elements[i], out);
      }
      out->push_back(']');
      return;
    }
    case Type::kObject: {
      out->push_back('{');
      bool first = true;
      value.ForEachMember([&](std::string_view key, const Value& member) {
        if (!first) out->push_back(',');
        first = false;
        AppendQuoted(key, out);
        out->push_back(':');
        AppendJson(member, out);
      });
      out->push_back('}');
      return;
    }
  }
}

std::string ToJson(const Value& value) {
  std::string out;
  AppendJson(value, &out);
  return out;
}

Result<Value> ParseJson(std::string_view text) {
  dom::parser parser;
  const simdjson::padded_string padded(text);
  dom::element root;
  if (auto error = parser.parse(padded).get(root)) {
    return ClassifiedError(ErrorClass::kBadData, "json", "invalid_json",
                           std::string("invalid JSON: ") + simdjson::error_message(error));
  }
  return Value::Borrowed(root).Owned();
}

}  // namespace weir::records::jmespath
