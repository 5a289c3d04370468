// Listings too long to hold at once (`history`, `log`, `recall`), printed as
// a table or, with --json, as a JSON array, in two passes over the store's
// pages: the first reads every item (and finds the table's widths), so a
// store that cannot be read fails before anything is printed; the second
// prints what the first saw. Items written in between are left to the next
// call; each command's second walk says how it stops at the first's end (a
// sequence number, a span of times).
#ifndef CLI_LISTING_H_
#define CLI_LISTING_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "output.h"

namespace cli {

// How one item of a listing is printed: a table row under `headers`, or a
// JSON array entry.
template <typename Item>
struct ListingFormat {
  std::vector<std::string> headers;
  std::vector<bool> right_aligned;  // by column index
  std::function<std::vector<std::string>(const Item&)> row;
  std::function<nlohmann::json(const Item&)> json;
};

// Prints a listing. `first(note)` walks the items calling note(item) for
// each; `second(print)` walks them again calling print(item), which returns
// false once stdout fails (the walk should then stop). Each returns the
// walk's grainstore::Status. The second walk is skipped when the first saw
// nothing. `what` names the command in a store error. Returns kExitOk or
// the exit code of a failure it reported; an error in the second pass
// leaves what was printed cut short (a JSON array unclosed), so a reader
// never takes part of a listing for all of it.
template <typename Item, typename FirstWalk, typename SecondWalk>
int PrintListing(std::string_view what, const ListingFormat<Item>& format, bool json,
                 FirstWalk first, SecondWalk second) {
  Table table(format.headers, format.right_aligned);
  bool any = false;
  auto st = first([&](const Item& item) {
    if (!json) table.Measure(format.row(item));
    any = true;
  });
  if (!st.ok()) return ReportError(what, st);
  if (!json && EmitPart(table.RenderHeader()) != kExitOk) return kExitFailed;
  JsonArrayText array;
  bool written = true;
  if (any) {
    st = second([&](const Item& item) {
      const std::string text =
          json ? array.Item(format.json(item)) : table.RenderRow(format.row(item));
      written = EmitPart(text) == kExitOk;
      return written;
    });
  }
  if (!written) return kExitFailed;
  if (!st.ok()) return ReportError(what, st);
  return Emit(json ? array.End() : "");
}

}  // namespace cli

#endif  // CLI_LISTING_H_
