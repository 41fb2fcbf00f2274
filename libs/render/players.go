package render

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
	"golang.org/x/net/html"
)

// players is the goldmark extension for what Obsidian shows in place of a web address
// embedded as an image, `![](https://…)`:
//
//   - A YouTube or Vimeo video (videoOf) is a player: an iframe of the service's own
//     player, rebuilt from the video's id alone, with fixed sandbox, allow,
//     referrerpolicy and loading attributes, and the size written with the image
//     (`![|640](…)`, `![|640x360](…)`), 560×315 when none is. So is an <iframe> of such
//     a video in the note's HTML (see keepHTML), which keeps nothing but its size.
//   - A web page is a link to it, its text the image's alt text, else the address:
//     an address on a host of pages (pageHosts: X/Twitter posts, YouTube's and Vimeo's
//     other pages, Instagram, Facebook, TikTok, Reddit…), a site's root ("/" or no path),
//     a path ending in ".html" or ".htm", or a file Obsidian shows but not as an image
//     (audio, video, PDF: IsAttachment). So is any other <iframe> of the note's HTML,
//     with an http(s) address.
//   - Any other address stays an image: image hosts often serve images at addresses
//     without an extension.
//
// A player is generated markup (generate): inserted after the note's HTML is sanitized,
// so that policy never allows an iframe. Without room for it in the allowance of
// generated markup, a player shows as a link to the video, and is reported.
type players struct{}

func (players) Extend(m goldmark.Markdown) {
	// After noteLinks, which reads an image's size.
	m.Parser().AddOptions(parser.WithASTTransformers(util.Prioritized(players{}, 70)))
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(players{}, 500)))
}

var kindWebEmbed = ast.NewNodeKind("WebEmbed")

// webEmbedNode is an image whose address is a video or a web page. It holds the image
// node, so that References still finds the image.
type webEmbedNode struct {
	ast.BaseInline
	video video // of a player; "" id for a link
	url   string
	text  string // of a link
}

func (n *webEmbedNode) Kind() ast.NodeKind { return kindWebEmbed }

func (n *webEmbedNode) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{"URL": n.url}, nil)
}

// video is a YouTube or Vimeo video, and the size to show it at.
type video struct {
	service       string // "youtube" or "vimeo"
	id            string
	width, height int
}

var (
	youTubeID = regexp.MustCompile(`^[A-Za-z0-9_-]{11}$`)
	vimeoID   = regexp.MustCompile(`^[1-9][0-9]{0,11}$`)
)

// videoOf reads an http(s) address as a video: youtube.com/watch?v=ID,
// youtube.com/shorts/ID, /embed/ID, /live/ID, youtu.be/ID, youtube-nocookie.com/embed/ID,
// vimeo.com/ID (and vimeo.com/ID/HASH) and player.vimeo.com/video/ID, with or without
// "www." or "m.". The id must match its service's pattern.
func videoOf(address string) (video, bool) {
	u, host, path, ok := webAddress(address)
	if !ok {
		return video{}, false
	}
	v := video{}
	switch host {
	case "youtube.com", "youtube-nocookie.com", "music.youtube.com":
		v.service = "youtube"
		if len(path) == 1 && path[0] == "watch" {
			v.id = u.Query().Get("v")
		} else if len(path) == 2 && (path[0] == "shorts" || path[0] == "embed" || path[0] == "live" || path[0] == "v") {
			v.id = path[1]
		}
	case "youtu.be":
		v.service = "youtube"
		if len(path) == 1 {
			v.id = path[0]
		}
	case "vimeo.com":
		v.service = "vimeo"
		if len(path) == 1 || len(path) == 2 && vimeoID.MatchString(path[0]) {
			v.id = path[0]
		}
	case "player.vimeo.com":
		v.service = "vimeo"
		if len(path) == 2 && path[0] == "video" {
			v.id = path[1]
		}
	}
	if v.service == "youtube" && youTubeID.MatchString(v.id) || v.service == "vimeo" && vimeoID.MatchString(v.id) {
		return v, true
	}
	return video{}, false
}

// webAddress parses an absolute http(s) address without credentials or port, and
// returns its host (lower-case, without "www." or "m.") and its path's segments.
func webAddress(address string) (u *url.URL, host string, path []string, ok bool) {
	u, err := url.Parse(strings.TrimSpace(address))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || u.Port() != "" || u.Host == "" {
		return nil, "", nil, false
	}
	host = strings.TrimPrefix(strings.TrimPrefix(strings.ToLower(u.Hostname()), "www."), "m.")
	if p := strings.Trim(u.Path, "/"); p != "" {
		path = strings.Split(p, "/")
	}
	return u, host, path, true
}

// pageHosts serve web pages at their addresses, not images.
var pageHosts = set([]string{"twitter.com", "x.com", "mobile.twitter.com", "youtube.com", "youtu.be",
	"vimeo.com", "instagram.com", "facebook.com", "tiktok.com", "reddit.com", "old.reddit.com",
	"linkedin.com", "threads.net", "bsky.app"})

// isWebPage reports whether an image's address is a web page (see players).
func isWebPage(address string) bool {
	u, host, path, ok := webAddress(address)
	if !ok {
		return false
	}
	p := strings.ToLower(u.Path)
	return pageHosts[host] || len(path) == 0 || strings.HasSuffix(p, ".html") || strings.HasSuffix(p, ".htm") ||
		IsAttachment(p) && !imageFile.MatchString(p)
}

// imageFile matches the extensions of the images Obsidian shows.
var imageFile = regexp.MustCompile(`(?i)\.(avif|bmp|gif|jpe?g|png|svg|webp)$`)

// Transform puts each image whose address is a video or a web page in a webEmbedNode.
func (players) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	source := reader.Source()
	for _, img := range nodesOf[*ast.Image](doc) {
		address := string(img.Destination)
		v, isVideo := videoOf(address)
		if !isVideo && !isWebPage(address) {
			continue
		}
		n := &webEmbedNode{url: address, text: strings.TrimSpace(plainText(img, source))}
		if isVideo {
			n.video = v
			n.video.width, n.video.height = attributeSize(img, "width"), attributeSize(img, "height")
		}
		n.SetPos(img.Pos())
		img.Parent().ReplaceChild(img.Parent(), img, n)
		n.AppendChild(n, img)
	}
}

// attributeSize is the size imageSize gave img, 0 for none.
func attributeSize(img *ast.Image, name string) int {
	v, _ := img.AttributeString(name)
	b, _ := v.([]byte)
	return dimension(string(b))
}

// plainText is the text of n's inline children, as an image's alt text.
func plainText(n ast.Node, source []byte) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(source))
		case *ast.String:
			b.Write(c.Value)
		default:
			b.WriteString(plainText(c, source))
		}
	}
	return b.String()
}

func (players) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindWebEmbed, func(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkSkipChildren, nil
		}
		e := n.(*webEmbedNode)
		if e.video.id != "" {
			e.video.generate(w.(*sink), len(e.url))
		} else {
			writeLink(w.(*sink), e.url, e.text)
		}
		return ast.WalkSkipChildren, nil
	})
}

// writeLink writes a link to address, showing text (the address when empty); policy
// drops an href it does not allow.
func writeLink(s *sink, address, text string) {
	if text == "" {
		text = address
	}
	_, _ = s.WriteString(`<a href="` + html.EscapeString(address) + `">` + html.EscapeString(text) + "</a>")
}

// frame writes what an <iframe> of a note's HTML of n bytes shows: a player of its
// video, else a link to its http(s) address, else nothing.
func frame(s *sink, tok html.Token, n int) {
	var src string
	v := video{}
	for _, a := range tok.Attr {
		switch a.Key {
		case "src":
			src = a.Val
		case "width":
			v.width = dimension(a.Val)
		case "height":
			v.height = dimension(a.Val)
		}
	}
	if found, ok := videoOf(src); ok {
		found.width, found.height = v.width, v.height
		found.generate(s, n)
	} else if _, _, _, ok := webAddress(src); ok {
		writeLink(s, strings.TrimSpace(src), "")
	}
}

// The fixed attributes of a player. The sandbox lets the player run its own script in
// its own origin and open the video on its site; allow grants what playing needs.
const (
	playerSandbox  = "allow-scripts allow-same-origin allow-presentation allow-popups allow-popups-to-escape-sandbox"
	playerAllow    = "encrypted-media; picture-in-picture; fullscreen"
	playerReferrer = "strict-origin-when-cross-origin" // YouTube's player refuses to play without a referrer
)

// PlayerOrigins are the origins of the players' frames, for a page's frame-src.
var PlayerOrigins = []string{"https://www.youtube-nocookie.com", "https://player.vimeo.com"}

// generate writes v's player as generated markup, for n bytes of the note, with a link
// to the video in its place when it does not fit.
func (v video) generate(s *sink, n int) {
	src, page, title := PlayerOrigins[0]+"/embed/"+v.id, "https://www.youtube.com/watch?v="+v.id, "YouTube video"
	if v.service == "vimeo" {
		src, page, title = PlayerOrigins[1]+"/video/"+v.id+"?dnt=1", "https://vimeo.com/"+v.id, "Vimeo video"
	}
	width, height := v.width, v.height
	switch {
	case width == 0:
		width, height = 560, 315
	case height == 0:
		height = width * 9 / 16
	}
	markup := `<iframe class="player" src="` + src + `" title="` + title + `" width="` + strconv.Itoa(width) +
		`" height="` + strconv.Itoa(height) + `" sandbox="` + playerSandbox + `" allow="` + playerAllow +
		`" allowfullscreen referrerpolicy="` + playerReferrer + `" loading="lazy"></iframe>`
	s.generate(item{markup: markup, source: n, without: `<a href="` + page + `" rel="nofollow">` + page + `</a>`, ref: page})
}
