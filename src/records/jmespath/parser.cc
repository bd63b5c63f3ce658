#include "records/jmespath/parser.h"

#include <vector>

#include "records/jmespath/functions.h"
#include "records/jmespath/lexer.h"

namespace weir::records::jmespath {
namespace {

// Binding powers of the specification's reference implementation: what binds tighter sits
// higher. Tokens below kProjectionStop end the right-hand side of a projection.
int BindingPower(TokenKind kind) {
  switch (kind) {
    case TokenKind::kPipe:
      return 1;
    case TokenKind::kOr:
      return 2;
    case TokenKind::kAnd:
      return 3;
    case TokenKind::kEq:
    case TokenKind::kNe:
    case TokenKind::kLt:
    case TokenKind::kLte:
    case TokenKind::kGt:
    case TokenKind::kGte:
      return 5;
    case TokenKind::kFlatten:
      return 9;
    case TokenKind::kStar:
      return 20;
    case TokenKind::kFilter:
      return 21;
    case TokenKind::kDot:
      return 40;
    case TokenKind::kNot:
      return 45;
    case TokenKind::kLbrace:
      return 50;
    case TokenKind::kLbracket:
      return 55;
    case TokenKind::kLparen:
      return 60;
    default:
      return 0;
  }
}
constexpr int kProjectionStop = 10;

using NodePtr = std::unique_ptr<Node>;

NodePtr MakeNode(NodeKind kind, size_t position) {
  auto node = std::make_unique<Node>();
  node->kind = kind;
  node->position = position;
  return node;
}

NodePtr MakeNode(NodeKind kind, size_t position, NodePtr left, NodePtr right) {
  NodePtr node = MakeNode(kind, position);
  node->children.push_back(std::move(left));
  node->children.push_back(std::move(right));
  return node;
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  Result<NodePtr> Run() {
    WEIR_ASSIGN_OR_RAISE(NodePtr root, Expression(0));
    if (Current().kind != TokenKind::kEof) return Unexpected();
    return root;
  }

 private:
  const Token& Current() const { return tokens_[pos_]; }
  const Token& Lookahead(size_t ahead) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  void Advance() {
    if (pos_ + 1 < tokens_.size()) ++pos_;
  }
  Status Unexpected() const {
    return CompileError("syntax", Current().position,
                        "unexpected " + std::string(Describe(Current().kind)));
  }
  Status Match(TokenKind kind) {
    if (Current().kind != kind) {
      return CompileError("syntax", Current().position,
                          "expected " + std::string(Describe(kind)) + ", found " +
                              std::string(Describe(Current().kind)));
    }
    Advance();
    return Status::OK();
  }

  Result<NodePtr> Expression(int binding_power) {
    // Each level is a native stack frame (here and when evaluating): bound it.
    if (++depth_ > kMaxDepth) {
      return CompileError("syntax", Current().position, "the expression is nested too deeply");
    }
    WEIR_ASSIGN_OR_RAISE(NodePtr node, ExpressionAtDepth(binding_power));
    --depth_;
    return node;
  }

  Result<NodePtr> ExpressionAtDepth(int binding_power) {
    Token token = Current();
    Advance();
    WEIR_ASSIGN_OR_RAISE(NodePtr left, Nud(token));
    while (binding_power < BindingPower(Current().kind)) {
      Token op = Current();
      Advance();
      WEIR_ASSIGN_OR_RAISE(left, Led(op, std::move(left)));
    }
    return left;
  }

  Result<NodePtr> Nud(const Token& token) {
    const size_t at = token.position;
    switch (token.kind) {
      case TokenKind::kLiteral: {
        NodePtr node = MakeNode(NodeKind::kLiteral, at);
        node->literal = token.literal;
        return node;
      }
      case TokenKind::kRawString: {
        NodePtr node = MakeNode(NodeKind::kLiteral, at);
        node->literal = Value::String(token.text);
        return node;
      }
      case TokenKind::kUnquotedIdentifier: {
        NodePtr node = MakeNode(NodeKind::kField, at);
        node->name = token.text;
        return node;
      }
      case TokenKind::kQuotedIdentifier: {
        if (Current().kind == TokenKind::kLparen) {
          return CompileError("syntax", at, "a function name cannot be a quoted identifier");
        }
        NodePtr node = MakeNode(NodeKind::kField, at);
        node->name = token.text;
        return node;
      }
      case TokenKind::kStar: {
        NodePtr right;
        if (Current().kind == TokenKind::kRbracket) {
          right = MakeNode(NodeKind::kCurrent, at);
        } else {
          WEIR_ASSIGN_OR_RAISE(right, ProjectionRhs(BindingPower(TokenKind::kStar)));
        }
        return MakeNode(NodeKind::kValueProjection, at, MakeNode(NodeKind::kCurrent, at),
                        std::move(right));
      }
      case TokenKind::kFilter:
        return LedFilter(at, MakeNode(NodeKind::kCurrent, at));
      case TokenKind::kLbrace:
        return MultiSelectHash(at);
      case TokenKind::kLparen: {
        WEIR_ASSIGN_OR_RAISE(NodePtr inner, Expression(0));
        WEIR_RETURN_NOT_OK(Match(TokenKind::kRparen));
        return inner;
      }
      case TokenKind::kFlatten:
        return LedFlatten(at, MakeNode(NodeKind::kCurrent, at));
      case TokenKind::kNot: {
        WEIR_ASSIGN_OR_RAISE(NodePtr operand, Expression(BindingPower(TokenKind::kNot)));
        NodePtr node = MakeNode(NodeKind::kNot, at);
        node->children.push_back(std::move(operand));
        return node;
      }
      case TokenKind::kLbracket: {
        const TokenKind next = Current().kind;
        if (next == TokenKind::kNumber || next == TokenKind::kColon) {
          WEIR_ASSIGN_OR_RAISE(NodePtr right, IndexExpression());
          return ProjectIfSlice(at, MakeNode(NodeKind::kCurrent, at), std::move(right));
        }
        if (next == TokenKind::kStar && Lookahead(1).kind == TokenKind::kRbracket) {
          Advance();
          Advance();
          WEIR_ASSIGN_OR_RAISE(NodePtr right, ProjectionRhs(BindingPower(TokenKind::kStar)));
          return MakeNode(NodeKind::kProjection, at, MakeNode(NodeKind::kCurrent, at),
                          std::move(right));
        }
        return MultiSelectList(at);
      }
      case TokenKind::kCurrent:
        return MakeNode(NodeKind::kCurrent, at);
      case TokenKind::kExpref: {
        WEIR_ASSIGN_OR_RAISE(NodePtr operand, Expression(BindingPower(TokenKind::kExpref)));
        NodePtr node = MakeNode(NodeKind::kExpref, at);
        node->children.push_back(std::move(operand));
        return node;
      }
      default:
        return CompileError("syntax", at, "unexpected " + std::string(Describe(token.kind)));
    }
  }

  Result<NodePtr> Led(const Token& token, NodePtr left) {
    const size_t at = token.position;
    switch (token.kind) {
      case TokenKind::kDot: {
        if (Current().kind == TokenKind::kStar) {
          Advance();
          WEIR_ASSIGN_OR_RAISE(NodePtr right, ProjectionRhs(BindingPower(TokenKind::kDot)));
          return MakeNode(NodeKind::kValueProjection, at, std::move(left), std::move(right));
        }
        WEIR_ASSIGN_OR_RAISE(NodePtr right, DotRhs(BindingPower(TokenKind::kDot)));
        return MakeNode(NodeKind::kSubexpression, at, std::move(left), std::move(right));
      }
      case TokenKind::kPipe:
      case TokenKind::kOr:
      case TokenKind::kAnd: {
        WEIR_ASSIGN_OR_RAISE(NodePtr right, Expression(BindingPower(token.kind)));
        const NodeKind kind = token.kind == TokenKind::kPipe ? NodeKind::kPipe
                              : token.kind == TokenKind::kOr ? NodeKind::kOr
                                                             : NodeKind::kAnd;
        return MakeNode(kind, at, std::move(left), std::move(right));
      }
      case TokenKind::kLparen:
        return FunctionCall(std::move(left));
      case TokenKind::kFilter:
        return LedFilter(at, std::move(left));
      case TokenKind::kFlatten:
        return LedFlatten(at, std::move(left));
      case TokenKind::kEq:
      case TokenKind::kNe:
      case TokenKind::kLt:
      case TokenKind::kLte:
      case TokenKind::kGt:
      case TokenKind::kGte: {
        WEIR_ASSIGN_OR_RAISE(NodePtr right, Expression(BindingPower(token.kind)));
        NodePtr node = MakeNode(NodeKind::kComparator, at, std::move(left), std::move(right));
        node->comparator = ToComparator(token.kind);
        return node;
      }
      case TokenKind::kLbracket: {
        const TokenKind next = Current().kind;
        if (next == TokenKind::kNumber || next == TokenKind::kColon) {
          WEIR_ASSIGN_OR_RAISE(NodePtr right, IndexExpression());
          return ProjectIfSlice(at, std::move(left), std::move(right));
        }
        WEIR_RETURN_NOT_OK(Match(TokenKind::kStar));
        WEIR_RETURN_NOT_OK(Match(TokenKind::kRbracket));
        WEIR_ASSIGN_OR_RAISE(NodePtr right, ProjectionRhs(BindingPower(TokenKind::kStar)));
        return MakeNode(NodeKind::kProjection, at, std::move(left), std::move(right));
      }
      default:
        return CompileError("syntax", at, "unexpected " + std::string(Describe(token.kind)));
    }
  }

  static Comparator ToComparator(TokenKind kind) {
    switch (kind) {
      case TokenKind::kNe:
        return Comparator::kNe;
      case TokenKind::kLt:
        return Comparator::kLt;
      case TokenKind::kLte:
        return Comparator::kLte;
      case TokenKind::kGt:
        return Comparator::kGt;
      case TokenKind::kGte:
        return Comparator::kGte;
      default:
        return Comparator::kEq;
    }
  }

  Result<NodePtr> LedFilter(size_t at, NodePtr left) {
    WEIR_ASSIGN_OR_RAISE(NodePtr condition, Expression(0));
    WEIR_RETURN_NOT_OK(Match(TokenKind::kRbracket));
    NodePtr right;
    if (Current().kind == TokenKind::kFlatten) {
      right = MakeNode(NodeKind::kCurrent, at);
    } else {
      WEIR_ASSIGN_OR_RAISE(right, ProjectionRhs(BindingPower(TokenKind::kFilter)));
    }
    NodePtr node = MakeNode(NodeKind::kFilterProjection, at, std::move(left), std::move(right));
    node->children.push_back(std::move(condition));
    return node;
  }

  Result<NodePtr> LedFlatten(size_t at, NodePtr left) {
    NodePtr flatten = MakeNode(NodeKind::kFlatten, at);
    flatten->children.push_back(std::move(left));
    WEIR_ASSIGN_OR_RAISE(NodePtr right, ProjectionRhs(BindingPower(TokenKind::kFlatten)));
    return MakeNode(NodeKind::kProjection, at, std::move(flatten), std::move(right));
  }

  // After `[`: `number]` or a slice `start:stop:step]`.
  Result<NodePtr> IndexExpression() {
    const size_t at = Current().position;
    if (Current().kind == TokenKind::kColon || Lookahead(1).kind == TokenKind::kColon) {
      NodePtr node = MakeNode(NodeKind::kSlice, at);
      std::optional<int64_t> parts[3];
      int part = 0;
      while (Current().kind != TokenKind::kRbracket) {
        if (Current().kind == TokenKind::kColon) {
          if (++part == 3) return Unexpected();
          Advance();
        } else if (Current().kind == TokenKind::kNumber) {
          if (parts[part].has_value()) return Unexpected();
          parts[part] = Current().number;
          Advance();
        } else {
          return Unexpected();
        }
      }
      Advance();
      if (parts[2].has_value() && *parts[2] == 0) {
        return CompileError("invalid-value", at, "a slice's step cannot be 0");
      }
      node->start = parts[0];
      node->stop = parts[1];
      node->step = parts[2].value_or(1);
      return node;
    }
    NodePtr node = MakeNode(NodeKind::kIndex, at);
    node->index = Current().number;
    Advance();
    WEIR_RETURN_NOT_OK(Match(TokenKind::kRbracket));
    return node;
  }

  Result<NodePtr> ProjectIfSlice(size_t at, NodePtr left, NodePtr right) {
    const bool slice = right->kind == NodeKind::kSlice;
    NodePtr indexed = MakeNode(NodeKind::kSubexpression, at, std::move(left), std::move(right));
    if (!slice) return indexed;
    WEIR_ASSIGN_OR_RAISE(NodePtr rhs, ProjectionRhs(BindingPower(TokenKind::kStar)));
    return MakeNode(NodeKind::kProjection, at, std::move(indexed), std::move(rhs));
  }

  Result<NodePtr> ProjectionRhs(int binding_power) {
    const TokenKind next = Current().kind;
    if (BindingPower(next) < kProjectionStop)
      return MakeNode(NodeKind::kCurrent, Current().position);
    if (next == TokenKind::kLbracket || next == TokenKind::kFilter) {
      return Expression(binding_power);
    }
    if (next == TokenKind::kDot) {
      Advance();
      return DotRhs(binding_power);
    }
    return Unexpected();
  }

  Result<NodePtr> DotRhs(int binding_power) {
    const Token& next = Current();
    switch (next.kind) {
      case TokenKind::kQuotedIdentifier:
      case TokenKind::kUnquotedIdentifier:
      case TokenKind::kStar:
        return Expression(binding_power);
      case TokenKind::kLbracket: {
        const size_t at = next.position;
        Advance();
        return MultiSelectList(at);
      }
      case TokenKind::kLbrace: {
        const size_t at = next.position;
        Advance();
        return MultiSelectHash(at);
      }
      default:
        return Unexpected();
    }
  }

  Result<NodePtr> MultiSelectList(size_t at) {
    NodePtr node = MakeNode(NodeKind::kMultiSelectList, at);
    while (true) {
      WEIR_ASSIGN_OR_RAISE(NodePtr element, Expression(0));
      node->children.push_back(std::move(element));
      if (Current().kind == TokenKind::kRbracket) break;
      WEIR_RETURN_NOT_OK(Match(TokenKind::kComma));
    }
    Advance();
    return node;
  }

  Result<NodePtr> MultiSelectHash(size_t at) {
    NodePtr node = MakeNode(NodeKind::kMultiSelectHash, at);
    while (true) {
      const Token& key = Current();
      if (key.kind != TokenKind::kUnquotedIdentifier && key.kind != TokenKind::kQuotedIdentifier) {
        return CompileError("syntax", key.position,
                            "expected a key, found " + std::string(Describe(key.kind)));
      }
      node->keys.push_back(key.text);
      Advance();
      WEIR_RETURN_NOT_OK(Match(TokenKind::kColon));
      WEIR_ASSIGN_OR_RAISE(NodePtr value, Expression(0));
      node->children.push_back(std::move(value));
      if (Current().kind == TokenKind::kRbrace) break;
      WEIR_RETURN_NOT_OK(Match(TokenKind::kComma));
    }
    Advance();
    return node;
  }

  Result<NodePtr> FunctionCall(NodePtr name) {
    if (name->kind != NodeKind::kField) {
      return CompileError("syntax", name->position, "only a name can be called as a function");
    }
    NodePtr node = MakeNode(NodeKind::kFunction, name->position);
    node->name = name->name;
    while (Current().kind != TokenKind::kRparen) {
      WEIR_ASSIGN_OR_RAISE(NodePtr argument, Expression(0));
      node->children.push_back(std::move(argument));
      if (Current().kind == TokenKind::kRparen) break;
      WEIR_RETURN_NOT_OK(Match(TokenKind::kComma));
      if (Current().kind == TokenKind::kRparen) return Unexpected();
    }
    Advance();
    node->function = FindFunction(node->name);
    if (node->function == nullptr) {
      return CompileError("unknown-function", node->position,
                          "unknown function " + node->name + "()");
    }
    WEIR_RETURN_NOT_OK(CheckArity(*node->function, node->children.size(), node->position));
    return node;
  }

  static constexpr int kMaxDepth = 256;

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

Result<std::unique_ptr<Node>> Parse(std::string_view expression) {
  // Chains (`a.b.c...`, `a | b | ...`) grow the tree without recursing in the parser; their
  // length bounds the tree's height, which evaluation and destruction recurse over.
  if (expression.size() > kMaxExpressionBytes) {
    return CompileError(
        "syntax", kMaxExpressionBytes,
        "the expression is longer than " + std::to_string(kMaxExpressionBytes) + " bytes");
  }
  WEIR_ASSIGN_OR_RAISE(std::vector<Token> tokens, Tokenize(expression));
  return Parser(std::move(tokens)).Run();
}

}  // namespace weir::records::jmespath
