// The fast decoder against nlohmann::json: wherever it answers, it must build
// the document nlohmann::json builds, value types included; and it must
// answer for the commands agents send.
#include "json_fast.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "json_input.h"

namespace memtool::internal {
namespace {

using nlohmann::json;

// Equal values of equal types, all the way down (json's operator== takes
// unsigned 1 and signed 1 as equal; the dispatcher does not).
bool StrictlyEqual(const json& a, const json& b) {
  if (a.type() != b.type()) return false;
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      const auto other = b.find(it.key());
      if (other == b.end() || !StrictlyEqual(*it, *other)) return false;
    }
    return true;
  }
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!StrictlyEqual(a[i], b[i])) return false;
    }
    return true;
  }
  return a == b;
}

// nlohmann::json's own reading of `text`, or a discarded value.
json Reference(const std::string& text) {
  return json::parse(text, nullptr, /*allow_exceptions=*/false);
}

// Where the fast decoder answers, its answer is nlohmann::json's.
void ExpectAgreement(const std::string& text, bool* answered) {
  json fast;
  *answered = TryParseFlatObject(text, &fast);
  if (!*answered) return;
  const json reference = Reference(text);
  ASSERT_FALSE(reference.is_discarded()) << "accepted what nlohmann::json rejects: " << text;
  ASSERT_TRUE(StrictlyEqual(fast, reference))
      << "input: " << text << "\nfast: " << fast.dump() << "\nnlohmann: " << reference.dump();
}

const std::vector<std::string>& Commands() {
  static const std::vector<std::string> commands = {
      R"({"command":"view","path":"/memories"})",
      R"({"command":"view","path":"/memories/notes.md","view_range":[3, -1]})",
      R"({"command":"create","path":"/memories/prefs.md","file_text":"Vegetarian.\nNo nuts.\n"})",
      R"({"command":"str_replace","path":"/memories/a.md","old_str":"tea","new_str":"coffee"})",
      R"({"command":"str_replace","path":"/memories/a.md","old_str":"tea","new_str":null})",
      R"({"command":"insert","path":"/memories/a.md","insert_line":0,"insert_text":"top\n"})",
      R"({"command":"delete","path":"/memories/old"})",
      R"({"command":"rename","old_path":"/memories/a.md","new_path":"/memories/b/a.md"})",
      " \t\r\n{ \"command\" : \"view\" , \"path\" : \"/memories\" } \n",
      R"({"command":"create","path":"/memories/u.md","file_text":"caf\u00e9 \u65e5\u672c \ud83d\ude00 \u0000 \/ \b\f\r\t \"q\" \\"})",
      "{\"command\":\"create\",\"path\":\"/memories/raw.md\",\"file_text\":\"caf\xC3\xA9 \xE6\x97\xA5 \xF0\x9F\x98\x80 \x7F\"}",
      R"({"command":"insert","path":"/memories/a.md","insert_line":-12,"insert_text":""})",
      R"({"command":"insert","path":"/memories/a.md","insert_line":999999999999999999,"insert_text":"x"})",
      R"({"path":"/memories/a","path":"/memories/b","command":"view","extra":[true,false,null,"s",1]})",
      R"({"command":"view","path":"/memories","view_range":[]})",
      R"({"command":"view","path":"/memories","":-0})",
      "{}",
      "{ }",
  };
  return commands;
}

TEST(JsonFastTest, AnswersForTheCommandsAgentsSendAndAgreesWithNlohmann) {
  for (const std::string& text : Commands()) {
    bool answered = false;
    ExpectAgreement(text, &answered);
    EXPECT_TRUE(answered) << text;
  }
}

TEST(JsonFastTest, LeavesEverythingElseToNlohmann) {
  const std::vector<std::string> declined = {
      "",
      "   ",
      "[1,2]",
      "\"s\"",
      "\xEF\xBB\xBF{\"command\":\"view\"}",                 // a byte-order mark
      R"({"command":"view","o":{"nested":1}})",            // a nested object
      R"({"command":"view","a":[[1]]})",                   // a nested array
      R"({"insert_line":1.0})",                            // a fraction
      R"({"insert_line":1e2})",                            // an exponent
      R"({"insert_line":1234567890123456789})",            // 19 digits
      R"({"insert_line":-1234567890123456789})",
      R"({"insert_line":01})",                             // a leading zero
      R"({"insert_line":-})",
      R"({"insert_line":+1})",
      R"({"a":1,})",                                        // a trailing comma
      R"({"a":[1,]})",
      R"({"a" 1})",
      R"({"a":1} x)",                                       // trailing bytes
      R"({"a":1}{})",
      R"({"a":tru})",
      R"({"a":truex})",
      R"({"a":"\ud800"})",                                 // a lone high surrogate
      R"({"a":"\udc00"})",                                 // a lone low surrogate
      R"({"a":"\ud800\u0041"})",
      R"({"a":"\x"})",                                     // an unknown escape
      R"({"a":"\u12G4"})",
      "{\"a\":\"tab\there\"}",                             // a raw control character
      "{\"a\":\"\xC0\xAF\"}",                               // an overlong form
      "{\"a\":\"\xED\xA0\x80\"}",                           // an encoded surrogate
      "{\"a\":\"\xFF\"}",
      "{\"a\":\"unterminated}",
      "{\"a\":1",
      "{'a':1}",
  };
  for (const std::string& text : declined) {
    json doc = "untouched";
    EXPECT_FALSE(TryParseFlatObject(text, &doc)) << text;
    EXPECT_EQ(doc, json("untouched")) << text;
  }
}

// Random edits of the commands, biased to the bytes JSON's grammar turns on:
// wherever the fast decoder answers, nlohmann::json must agree.
TEST(JsonFastTest, AgreesWithNlohmannOnMutatedCommands) {
  const std::string alphabet =
      std::string("\"\\{}[],:0123456789-+.eEtrufalsn /bfnrtu") + std::string("\x00\x01\x1f\x7f", 4) +
      "\x80\xbf\xc2\xc3\xa9\xe0\xed\xa0\xf0\x9f\xf4\x90\xff";
  std::mt19937 rng(20261203);
  std::size_t answered_count = 0;
  std::size_t iterations = 0;
  for (int round = 0; round < 40000; ++round) {
    std::string text = Commands()[rng() % Commands().size()];
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const std::size_t at = rng() % (text.size() + 1);
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0: text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), c); break;
        case 1: if (at < text.size()) text.erase(at, 1); break;
        default: if (at < text.size()) text[at] = c; break;
      }
    }
    bool answered = false;
    ExpectAgreement(text, &answered);
    if (HasFatalFailure()) return;
    answered_count += answered ? 1 : 0;
    ++iterations;
  }
  // The edits must leave enough valid inputs for the agreement to mean much,
  // and enough invalid ones that the decoder is seen declining.
  EXPECT_GT(answered_count, iterations / 10);
  EXPECT_LT(answered_count, iterations - iterations / 10);
}

// Every byte that ends a plain run, at every offset of a string long enough
// to be read eight bytes at a time.
TEST(JsonFastTest, FindsTheByteThatEndsARunAtEveryOffset) {
  const std::vector<std::string> specials = {
      "\"",       "\\n",     std::string(1, '\0'), "\x01", "\x1f", "\x7f", "\x80",
      "\xC3\xA9", "\xE6\x97\xA5", "\xF0\x9F\x98\x80", "\xFF", "\xC3", " ",
  };
  for (const std::string& special : specials) {
    for (std::size_t at = 0; at <= 24; ++at) {
      std::string value = std::string(24, 'a');
      value.insert(at, special);
      const std::string text = "{\"k\":\"" + value + "\"}";
      bool answered = false;
      ExpectAgreement(text, &answered);
      if (HasFatalFailure()) return;
      const bool valid = !json::parse(text, nullptr, false).is_discarded();
      // A valid string of plain bytes, escapes and UTF-8 is always answered.
      EXPECT_EQ(answered, valid) << text;
    }
  }
}

// The encoder writes what nlohmann::json's dump() writes for every valid
// UTF-8 string, and declines the rest.
TEST(JsonFastTest, EncodesStringsAsNlohmannDumpsThem) {
  const std::vector<std::string> pieces = {
      "a", "plain text ", "\"", "\\", "/", "\b", "\f", "\n", "\r", "\t", std::string(1, '\0'),
      "\x01", "\x1f", "\x7f", "\xc3\xa9", "\xe6\x97\xa5", "\xf0\x9f\x98\x80", "\xc2\x9b",
      "\xef\xbf\xbd", "\x80", "\xff", "\xc3", "\xed\xa0\x80", "0123456789abcdef"};
  std::mt19937 rng(3);
  std::size_t encoded = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string value;
    const int n = static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) value += pieces[rng() % pieces.size()];
    std::string out = "prefix:";
    if (TryAppendJsonString(value, &out)) {
      ++encoded;
      ASSERT_EQ(out, "prefix:" + json(value).dump()) << json(value).dump();
    } else {
      EXPECT_EQ(out, "prefix:");
      std::string ignored;
      EXPECT_THROW(ignored = json(value).dump(), json::type_error);  // not UTF-8
    }
  }
  EXPECT_GT(encoded, 2000u);
  EXPECT_LT(encoded, 19000u);
}

// ParseJsonInput gives the same document through either decoder.
TEST(JsonFastTest, ParseJsonInputKeepsItsAnswers) {
  JsonInput input;
  ASSERT_TRUE(ParseJsonInput(R"({"command":"insert","insert_line":7})", &input));
  EXPECT_TRUE(input.doc["insert_line"].is_number_unsigned());
  EXPECT_TRUE(input.wide_integers.empty());
  JsonInput wide;
  ASSERT_TRUE(ParseJsonInput(R"({"command":"insert","insert_line":99999999999999999999})", &wide));
  EXPECT_EQ(wide.wide_integers.at("insert_line"), "99999999999999999999");
  JsonInput broken;
  EXPECT_FALSE(ParseJsonInput(R"({"command":"view",})", &broken));
  EXPECT_TRUE(broken.doc.is_discarded());
}

// Issue: the nlohmann fallback built the whole document, so a line of
// nested arrays took 75 times its size in memory (a 50 MB line 3.7 GB).
// What Dispatch never reads is dropped as it is decoded.
TEST(JsonFastTest, ParseJsonInputKeepsOnlyWhatACommandReads) {
  JsonInput input;
  ASSERT_TRUE(ParseJsonInput(
      R"({"command":"vi\u0065w","path":[[[1]]],"file_text":{"a":{"b":2}},"x":[1],"y":"z",)"
      R"("view_range":[1,[2,[3]],{"a":1},4],"old_str":null,"new_str":1.5,"insert_text":true})",
      &input));
  EXPECT_EQ(input.doc, json::parse(R"({"command":"view","path":[],"file_text":{},)"
                                   R"("view_range":[1,[],{}],"old_str":null,"new_str":1.5,)"
                                   R"("insert_text":true})"));
  JsonInput range;
  ASSERT_TRUE(ParseJsonInput(R"({"view_range":[[0],-99999999999999999999],"view_range":[3,4]})",
                             &range));
  EXPECT_EQ(range.doc["view_range"], json::parse("[3,4]"));  // the last member counts
  JsonInput deep;
  const std::string nested = "{\"command\":\"view\",\"path\":" + std::string(100000, '[') +
                             std::string(100000, ']') + "}";
  ASSERT_TRUE(ParseJsonInput(nested, &deep));
  EXPECT_EQ(deep.doc, json::parse(R"({"command":"view","path":[]})"));
  // The flat decoder drops unknown members too, and keeps wide integers.
  JsonInput flat;
  ASSERT_TRUE(ParseJsonInput(R"({"command":"insert","a":1,"b":"x","insert_line":7,"c":null})",
                             &flat));
  EXPECT_EQ(flat.doc, json::parse(R"({"command":"insert","insert_line":7})"));
  JsonInput unknown;
  ASSERT_TRUE(ParseJsonInput(R"({"x":99999999999999999999,"x2":[[1]],"path":"/memories"})",
                             &unknown));
  EXPECT_EQ(unknown.doc, json::parse(R"({"path":"/memories"})"));
  EXPECT_TRUE(unknown.wide_integers.empty());
  JsonInput top;
  ASSERT_TRUE(ParseJsonInput("[[1],{\"path\":2}]", &top));
  EXPECT_EQ(top.doc, json::array());  // not an object: Dispatch says so
  JsonInput scalar;
  ASSERT_TRUE(ParseJsonInput(" 7 ", &scalar));
  EXPECT_EQ(scalar.doc, 7);
}

}  // namespace
}  // namespace memtool::internal
