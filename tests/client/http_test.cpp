#include "compiler/client/http.hpp"

#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>

namespace pipec::client {
namespace {

TEST(ClientHttp, MultipartBodyHasOneFilePart) {
  auto [body, type] = multipart_body(FilePart{"uploadfile", "my pipeline.tar.gz", "DATA"});
  ASSERT_EQ(type.rfind("multipart/form-data; boundary=", 0), 0u);
  std::string boundary = type.substr(type.find('=') + 1);
  EXPECT_EQ(body, "--" + boundary +
                      "\r\nContent-Disposition: form-data; name=\"uploadfile\"; "
                      "filename=\"my_pipeline.tar.gz\"\r\n"
                      "Content-Type: application/octet-stream\r\n\r\nDATA\r\n--" +
                      boundary + "--\r\n");
  // The boundary never occurs in the content.
  auto [again, type2] = multipart_body(FilePart{"uploadfile", "p", body});
  std::string boundary2 = type2.substr(type2.find('=') + 1);
  EXPECT_EQ(body.find(boundary2), std::string::npos);
}

TEST(ClientHttp, AHeaderWithALineBreakIsNotSent) {
  // Nothing listens on the URL: the request must be refused before any connection.
  CurlTransport transport{TransportOptions{}};
  HttpRequest request;
  request.url = "http://127.0.0.1:9/";
  request.headers.emplace_back("Cookie", "s=secret\r\nX-Admin: 1");
  HttpResponse response;
  Status status = transport.send(request, response);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.message(), "the Cookie header holds a line break or a NUL byte");
  EXPECT_EQ(response.status, 0);
}

TEST(ClientHttp, UrlEncodeKeepsOnlyUnreserved) {
  EXPECT_EQ(url_encode("a-b_c.d~e"), "a-b_c.d~e");
  EXPECT_EQ(url_encode("a b/c?d=e&f"), "a%20b%2Fc%3Fd%3De%26f");
  EXPECT_EQ(url_encode("\xc3\xa9"), "%C3%A9");
}

// Issue 25: an answer grew without bound in memory. Past 64 MiB the transfer stops and
// the request fails, saying why.
TEST(ClientHttp, AnAnswerOver64MiBIsRefused) {
  httplib::Server server;
  std::size_t size = (std::size_t{64} << 20) + 1;
  server.Get("/big", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(size, 'x'), "application/json");
  });
  server.Get("/fits", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(size - 1, 'x'), "application/json");
  });
  int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread thread([&] { server.listen_after_bind(); });
  CurlTransport transport{TransportOptions{}};
  HttpRequest request;
  request.url = "http://127.0.0.1:" + std::to_string(port) + "/big";
  HttpResponse response;
  Status status = transport.send(request, response);
  EXPECT_FALSE(status);
  EXPECT_EQ(status.message(), "the answer is larger than 64 MiB");
  request.url = "http://127.0.0.1:" + std::to_string(port) + "/fits";
  status = transport.send(request, response);
  EXPECT_TRUE(status) << status.message();
  EXPECT_EQ(response.body.size(), size - 1);
  server.stop();
  thread.join();
}

}  // namespace
}  // namespace pipec::client
