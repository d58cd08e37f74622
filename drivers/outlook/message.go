package outlook

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// The JSON shapes of Graph's message resource that the driver writes.
type (
	graphEmailAddress struct {
		Address string `json:"address"`
		Name    string `json:"name,omitempty"`
	}
	graphRecipient struct {
		EmailAddress graphEmailAddress `json:"emailAddress"`
	}
	graphBody struct {
		ContentType string `json:"contentType"` // text or html (Graph's bodyType members)
		Content     string `json:"content"`
	}
	graphHeader struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	graphAttachment struct {
		ODataType    string `json:"@odata.type"`
		Name         string `json:"name"`
		ContentType  string `json:"contentType"`
		ContentBytes string `json:"contentBytes"`
		IsInline     bool   `json:"isInline,omitempty"`
		ContentID    string `json:"contentId,omitempty"`
	}
	graphMessage struct {
		Subject                string            `json:"subject"`
		Body                   graphBody         `json:"body"`
		From                   *graphRecipient   `json:"from,omitempty"`
		ToRecipients           []graphRecipient  `json:"toRecipients,omitempty"`
		CcRecipients           []graphRecipient  `json:"ccRecipients,omitempty"`
		BccRecipients          []graphRecipient  `json:"bccRecipients,omitempty"`
		ReplyTo                []graphRecipient  `json:"replyTo,omitempty"`
		InternetMessageHeaders []graphHeader     `json:"internetMessageHeaders,omitempty"`
		Attachments            []graphAttachment `json:"attachments,omitempty"`
	}
	graphSendMail struct {
		Message         graphMessage `json:"message"`
		SaveToSentItems bool         `json:"saveToSentItems"`
	}
	// graphUploadItem is the body of createUploadSession.
	graphUploadItem struct {
		AttachmentItem struct {
			AttachmentType string `json:"attachmentType"`
			Name           string `json:"name"`
			Size           int    `json:"size"`
			ContentType    string `json:"contentType,omitempty"`
			IsInline       bool   `json:"isInline,omitempty"`
			ContentID      string `json:"contentId,omitempty"`
		} `json:"AttachmentItem"`
	}
)

// graphMessageOf converts msg (without its attachments) to Graph's shape.
// from is nil when the signed-in mailbox is the sender. Headers Graph
// does not take (only X- names) are returned in dropped.
func graphMessageOf(msg *core.Message, from *core.Address) (m graphMessage, dropped []string) {
	msg = msg.ForEnvelope()
	recipients := func(list []core.Address) []graphRecipient {
		out := make([]graphRecipient, 0, len(list))
		for _, a := range list {
			out = append(out, graphRecipient{EmailAddress: graphEmailAddress{Address: a.Email, Name: a.Name}})
		}
		return out
	}
	m = graphMessage{
		Subject:       msg.Subject,
		Body:          graphBody{ContentType: "text", Content: msg.Text},
		ToRecipients:  recipients(msg.To),
		CcRecipients:  recipients(msg.Cc),
		BccRecipients: recipients(msg.Bcc),
		ReplyTo:       recipients(msg.ReplyTo),
	}
	if msg.HTML != "" {
		// Graph takes one body; HTML wins, as mail clients show it.
		m.Body = graphBody{ContentType: "html", Content: msg.HTML}
	}
	if from != nil {
		m.From = &graphRecipient{EmailAddress: graphEmailAddress{Address: from.Email, Name: from.Name}}
	}
	for _, h := range msg.Headers {
		if len(h.Name) > 2 && strings.EqualFold(h.Name[:2], "x-") {
			m.InternetMessageHeaders = append(m.InternetMessageHeaders, graphHeader{Name: h.Name, Value: h.Value})
		} else {
			dropped = append(dropped, h.Name)
		}
	}
	return m, dropped
}

// graphAttachmentOf converts one attachment to a fileAttachment.
func graphAttachmentOf(a core.Attachment) graphAttachment {
	return graphAttachment{
		ODataType:    "#microsoft.graph.fileAttachment",
		Name:         a.Filename,
		ContentType:  contentType(a),
		ContentBytes: base64.StdEncoding.EncodeToString(a.Data),
		IsInline:     a.Inline,
		ContentID:    a.ContentID,
	}
}

// uploadItemOf is the createUploadSession body for a.
func uploadItemOf(a core.Attachment) graphUploadItem {
	var it graphUploadItem
	it.AttachmentItem.AttachmentType = "file"
	it.AttachmentItem.Name = a.Filename
	it.AttachmentItem.Size = len(a.Data)
	it.AttachmentItem.ContentType = contentType(a)
	it.AttachmentItem.IsInline = a.Inline
	it.AttachmentItem.ContentID = a.ContentID
	return it
}

func contentType(a core.Attachment) string {
	if a.ContentType == "" {
		return "application/octet-stream"
	}
	return a.ContentType
}

// encodedSize is the size of a's fileAttachment JSON, without encoding it.
func encodedSize(a core.Attachment) int {
	return base64.StdEncoding.EncodedLen(len(a.Data)) + len(a.Filename) + len(contentType(a)) + len(a.ContentID) + 160
}

// plan is how one message goes to Graph: a single sendMail request, or a
// draft (created with the attachments that fit in its request) completed
// with further attachment requests and upload sessions, then sent.
type plan struct {
	sendMail []byte            // the sendMail body; nil for the draft route
	draft    []byte            // the create-draft body
	attach   []core.Attachment // small attachments added one request each
	upload   []core.Attachment // large attachments sent through upload sessions
}

// planOf decides the route of msg under the request limit.
func planOf(m graphMessage, atts []core.Attachment, limit, large int) (plan, error) {
	var p plan
	size := 0
	fits := true
	for _, a := range atts {
		if len(a.Data) >= large {
			fits = false
		}
		size += encodedSize(a)
	}
	if fits {
		all := m
		for _, a := range atts {
			all.Attachments = append(all.Attachments, graphAttachmentOf(a))
		}
		body, err := json.Marshal(graphSendMail{Message: all, SaveToSentItems: true})
		if err != nil {
			return p, fmt.Errorf("encode message: %w", err)
		}
		if len(body) <= limit {
			p.sendMail = body
			return p, nil
		}
	}
	base, err := json.Marshal(m)
	if err != nil {
		return p, fmt.Errorf("encode message: %w", err)
	}
	room := limit - len(base)
	draft := m
	for _, a := range atts {
		switch n := encodedSize(a); {
		case len(a.Data) >= large:
			p.upload = append(p.upload, a)
		case n <= room:
			draft.Attachments = append(draft.Attachments, graphAttachmentOf(a))
			room -= n
		default:
			p.attach = append(p.attach, a)
		}
	}
	if p.draft, err = json.Marshal(draft); err != nil {
		return p, fmt.Errorf("encode message: %w", err)
	}
	return p, nil
}
