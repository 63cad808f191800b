#include "text/file_io.h"

#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "hlo/status_macros.h"
#include "text/module_locator.h"
#include "text/parser.h"
#include "text/str_util.h"

namespace hlogym {
namespace {

using text::Cat;

constexpr size_t kMaxDecompressedBytes = size_t{1} << 34;  // 16 GiB: corrupt-input guard

bool HasSuffix(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

absl::StatusOr<std::string> Gunzip(const std::string& data, const std::string& path) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  // 15 + 32: accept gzip and zlib headers.
  if (inflateInit2(&zs, 15 + 32) != Z_OK) return absl::InternalError("inflateInit2 failed");
  std::string out;
  char buffer[1 << 16];
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  int ret = Z_OK;
  size_t consumed_total = 0;
  while (true) {
    zs.next_out = reinterpret_cast<Bytef*>(buffer);
    zs.avail_out = sizeof(buffer);
    ret = inflate(&zs, Z_NO_FLUSH);
    if (ret != Z_OK && ret != Z_STREAM_END) break;
    out.append(buffer, sizeof(buffer) - zs.avail_out);
    if (out.size() > kMaxDecompressedBytes) {
      inflateEnd(&zs);
      return absl::InvalidArgumentError(Cat(path, ": decompressed data is too large"));
    }
    if (ret == Z_STREAM_END) {
      // Concatenated gzip members: continue with the next one.
      consumed_total = data.size() - zs.avail_in;
      if (zs.avail_in == 0) break;
      if (inflateReset(&zs) != Z_OK) break;
      (void)consumed_total;
      continue;
    }
    if (zs.avail_in == 0 && zs.avail_out != 0) {
      ret = Z_BUF_ERROR;  // truncated
      break;
    }
  }
  inflateEnd(&zs);
  if (ret != Z_STREAM_END) {
    return absl::InvalidArgumentError(Cat(path, ": corrupt or truncated gzip data"));
  }
  return out;
}

absl::StatusOr<std::string> Unzstd(const std::string& data, const std::string& path) {
  ZSTD_DStream* ds = ZSTD_createDStream();
  if (ds == nullptr) return absl::InternalError("ZSTD_createDStream failed");
  ZSTD_initDStream(ds);
  std::string out;
  std::string buffer(ZSTD_DStreamOutSize(), '\0');
  ZSTD_inBuffer in{data.data(), data.size(), 0};
  size_t last = 0;
  while (in.pos < in.size) {
    ZSTD_outBuffer o{buffer.data(), buffer.size(), 0};
    last = ZSTD_decompressStream(ds, &o, &in);
    if (ZSTD_isError(last)) {
      ZSTD_freeDStream(ds);
      return absl::InvalidArgumentError(
          Cat(path, ": corrupt zstd data: ", ZSTD_getErrorName(last)));
    }
    out.append(buffer.data(), o.pos);
    if (out.size() > kMaxDecompressedBytes) {
      ZSTD_freeDStream(ds);
      return absl::InvalidArgumentError(Cat(path, ": decompressed data is too large"));
    }
  }
  // Flush whatever is still buffered.
  while (last != 0) {
    ZSTD_outBuffer o{buffer.data(), buffer.size(), 0};
    last = ZSTD_decompressStream(ds, &o, &in);
    if (ZSTD_isError(last)) {
      ZSTD_freeDStream(ds);
      return absl::InvalidArgumentError(Cat(path, ": corrupt zstd data"));
    }
    out.append(buffer.data(), o.pos);
    if (o.pos == 0 && last != 0) {
      ZSTD_freeDStream(ds);
      return absl::InvalidArgumentError(Cat(path, ": truncated zstd data"));
    }
  }
  ZSTD_freeDStream(ds);
  return out;
}

absl::StatusOr<std::string> Gzip(std::string_view data) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    return absl::InternalError("deflateInit2 failed");
  }
  std::string out;
  char buffer[1 << 16];
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  // Feed in chunks so sizes above 4 GiB work.
  size_t remaining = data.size();
  int ret;
  do {
    uInt chunk = remaining > (1u << 30) ? (1u << 30) : static_cast<uInt>(remaining);
    zs.avail_in = chunk;
    remaining -= chunk;
    int flush = remaining == 0 ? Z_FINISH : Z_NO_FLUSH;
    do {
      zs.next_out = reinterpret_cast<Bytef*>(buffer);
      zs.avail_out = sizeof(buffer);
      ret = deflate(&zs, flush);
      if (ret == Z_STREAM_ERROR) {
        deflateEnd(&zs);
        return absl::InternalError("deflate failed");
      }
      out.append(buffer, sizeof(buffer) - zs.avail_out);
    } while (zs.avail_out == 0);
  } while (remaining > 0);
  deflateEnd(&zs);
  return out;
}

absl::StatusOr<std::string> Zstd(std::string_view data) {
  size_t bound = ZSTD_compressBound(data.size());
  std::string out(bound, '\0');
  size_t n = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3);
  if (ZSTD_isError(n))
    return absl::InternalError(Cat("zstd compression failed: ", ZSTD_getErrorName(n)));
  out.resize(n);
  return out;
}

}  // namespace

absl::StatusOr<std::string> ReadTextFile(const std::string& path) {
  std::string data;
  if (path == "-") {
    data.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    if (std::cin.bad()) return absl::InvalidArgumentError("<stdin>: read error");
  } else {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      return absl::InvalidArgumentError(Cat(path, ": is a directory"));
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      if (errno == ENOENT) return absl::NotFoundError(Cat(path, ": no such file"));
      return absl::InvalidArgumentError(Cat(path, ": cannot open: ", std::strerror(errno)));
    }
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (in.bad()) return absl::InvalidArgumentError(Cat(path, ": read error"));
    data = std::move(buffer).str();
  }
  const std::string& name = path == "-" ? std::string("<stdin>") : path;
  if (data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
      static_cast<unsigned char>(data[1]) == 0x8b) {
    return Gunzip(data, name);
  }
  if (data.size() >= 4 && static_cast<unsigned char>(data[0]) == 0x28 &&
      static_cast<unsigned char>(data[1]) == 0xb5 && static_cast<unsigned char>(data[2]) == 0x2f &&
      static_cast<unsigned char>(data[3]) == 0xfd) {
    return Unzstd(data, name);
  }
  return data;
}

absl::Status WriteTextFileAtomically(const std::string& path, std::string_view contents) {
  std::string compressed;
  std::string_view bytes = contents;
  if (HasSuffix(path, ".gz")) {
    HLOGYM_ASSIGN(z, Gzip(contents));
    compressed = std::move(z);
    bytes = compressed;
  } else if (HasSuffix(path, ".zst")) {
    HLOGYM_ASSIGN(z, Zstd(contents));
    compressed = std::move(z);
    bytes = compressed;
  }
  if (path == "-") {
    std::cout.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    std::cout.flush();
    if (!std::cout) return absl::InternalError("error writing to standard output");
    return absl::OkStatus();
  }
  std::random_device rd;
  std::string tmp =
      Cat(path, ".tmp.", static_cast<uint64_t>(getpid()), ".", static_cast<uint64_t>(rd()));
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) {
    return absl::InvalidArgumentError(
        Cat(path, ": cannot create ", tmp, ": ", std::strerror(errno)));
  }
  bool ok = bytes.empty() || std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = (std::fflush(f) == 0) && ok;
  ok = (fsync(fileno(f)) == 0 || errno == EINVAL) && ok;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) {
    std::remove(tmp.c_str());
    return absl::InternalError(Cat(path, ": error writing ", tmp));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::remove(tmp.c_str());
    return absl::InvalidArgumentError(
        Cat(path, ": cannot rename into place: ", std::strerror(err)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Module>> LoadModule(const std::string& path) {
  absl::StatusOr<std::string> text = ReadTextFile(path);
  if (!text.ok() && absl::IsNotFound(text.status()) && path != "-") {
    // Not a file: maybe a corpus or smoke module name (text/module_locator.h).
    HLOGYM_ASSIGN(located, LocateModule(path));
    text = ReadTextFile(located);
    if (!text.ok()) return text.status();
    return ParseModule(*text, located);
  }
  if (!text.ok()) return text.status();
  return ParseModule(*text, path == "-" ? std::string_view("<stdin>") : std::string_view(path));
}

}  // namespace hlogym
