package screening

import (
	"strings"
	"unicode"
)

// Japanese name readings. Kanji are put in Latin letters by Unidecode in
// their Mandarin reading (高山清司 GAO SHAN QING SI), which no list spelling of a
// Japanese name resembles. japaneseReading gives the Japanese (Hepburn)
// reading of a name whose kanji are all in the tables below: whole surnames
// and given names first (longest match), then single kanji in their usual
// reading in names. Long vowels are written without marks or doubling, as
// Japanese names are on sanctions lists (佐藤 SATO, 大野 ONO).
//
// Source: the tables were written for payd from general knowledge of common
// Japanese surnames and given names and their standard Hepburn readings; they
// copy no dictionary and are covered by the repository's licence. They are
// small by design (about 330 surnames and given names, 230 kanji): a name with
// a kanji outside them gets no Japanese reading, only the Mandarin one.

// japaneseNames are whole surnames and given names, read as a unit.
var japaneseNames = map[string]string{
	// surnames
	"佐藤": "SATO", "鈴木": "SUZUKI", "高橋": "TAKAHASHI", "田中": "TANAKA", "伊藤": "ITO", "渡辺": "WATANABE",
	"山本": "YAMAMOTO", "中村": "NAKAMURA", "小林": "KOBAYASHI", "加藤": "KATO", "吉田": "YOSHIDA", "山田": "YAMADA",
	"佐々木": "SASAKI", "山口": "YAMAGUCHI", "松本": "MATSUMOTO", "井上": "INOUE", "木村": "KIMURA", "斎藤": "SAITO",
	"清水": "SHIMIZU", "山崎": "YAMAZAKI", "池田": "IKEDA", "橋本": "HASHIMOTO", "阿部": "ABE", "石川": "ISHIKAWA",
	"山下": "YAMASHITA", "中島": "NAKAJIMA", "石井": "ISHII", "小川": "OGAWA", "前田": "MAEDA", "岡田": "OKADA",
	"長谷川": "HASEGAWA", "藤田": "FUJITA", "後藤": "GOTO", "近藤": "KONDO", "村上": "MURAKAMI", "遠藤": "ENDO",
	"青木": "AOKI", "坂本": "SAKAMOTO", "斉藤": "SAITO", "福田": "FUKUDA", "太田": "OTA", "西村": "NISHIMURA",
	"藤井": "FUJII", "金子": "KANEKO", "岡本": "OKAMOTO", "藤原": "FUJIWARA", "中野": "NAKANO", "三浦": "MIURA",
	"原田": "HARADA", "中川": "NAKAGAWA", "松田": "MATSUDA", "竹内": "TAKEUCHI", "小野": "ONO", "田村": "TAMURA",
	"中山": "NAKAYAMA", "和田": "WADA", "石田": "ISHIDA", "森田": "MORITA", "上田": "UEDA", "内田": "UCHIDA",
	"柴田": "SHIBATA", "酒井": "SAKAI", "宮崎": "MIYAZAKI", "横山": "YOKOYAMA", "高木": "TAKAGI", "安藤": "ANDO",
	"宮本": "MIYAMOTO", "大野": "ONO", "小島": "KOJIMA", "谷口": "TANIGUCHI", "今井": "IMAI", "工藤": "KUDO",
	"高田": "TAKADA", "増田": "MASUDA", "丸山": "MARUYAMA", "杉山": "SUGIYAMA", "村田": "MURATA", "大塚": "OTSUKA",
	"新井": "ARAI", "小山": "KOYAMA", "平野": "HIRANO", "藤本": "FUJIMOTO", "河野": "KONO", "上野": "UENO",
	"野口": "NOGUCHI", "武田": "TAKEDA", "松井": "MATSUI", "千葉": "CHIBA", "岩崎": "IWASAKI", "菅原": "SUGAWARA",
	"木下": "KINOSHITA", "久保": "KUBO", "佐野": "SANO", "野村": "NOMURA", "松尾": "MATSUO", "菊地": "KIKUCHI",
	"杉本": "SUGIMOTO", "市川": "ICHIKAWA", "古川": "FURUKAWA", "大西": "ONISHI", "島田": "SHIMADA", "水野": "MIZUNO",
	"桜井": "SAKURAI", "高野": "TAKANO", "渡部": "WATANABE", "吉川": "YOSHIKAWA", "山内": "YAMAUCHI", "西田": "NISHIDA",
	"飯田": "IIDA", "菊池": "KIKUCHI", "西川": "NISHIKAWA", "小松": "KOMATSU", "北村": "KITAMURA", "安田": "YASUDA",
	"五十嵐": "IGARASHI", "川口": "KAWAGUCHI", "平田": "HIRATA", "中田": "NAKATA", "久保田": "KUBOTA", "服部": "HATTORI",
	"岩田": "IWATA", "土屋": "TSUCHIYA", "川崎": "KAWASAKI", "福島": "FUKUSHIMA", "本田": "HONDA", "樋口": "HIGUCHI",
	"秋山": "AKIYAMA", "田口": "TAGUCHI", "永井": "NAGAI", "山中": "YAMANAKA", "中西": "NAKANISHI", "吉村": "YOSHIMURA",
	"川上": "KAWAKAMI", "大橋": "OHASHI", "石原": "ISHIHARA", "松岡": "MATSUOKA", "馬場": "BABA", "浜田": "HAMADA",
	"森本": "MORIMOTO", "矢野": "YANO", "浅野": "ASANO", "松下": "MATSUSHITA", "星野": "HOSHINO", "大久保": "OKUBO",
	"吉岡": "YOSHIOKA", "小池": "KOIKE", "野田": "NODA", "荒木": "ARAKI", "大谷": "OTANI", "内藤": "NAITO",
	"松浦": "MATSUURA", "熊谷": "KUMAGAI", "黒田": "KURODA", "尾崎": "OZAKI", "永田": "NAGATA", "川村": "KAWAMURA",
	"望月": "MOCHIZUKI", "田辺": "TANABE", "松村": "MATSUMURA", "荒井": "ARAI", "大島": "OSHIMA", "平井": "HIRAI",
	"早川": "HAYAKAWA", "菅野": "SUGANO", "栗原": "KURIHARA", "西山": "NISHIYAMA", "広瀬": "HIROSE", "横田": "YOKOTA",
	"石橋": "ISHIBASHI", "萩原": "HAGIWARA", "岩本": "IWAMOTO", "片山": "KATAYAMA", "関口": "SEKIGUCHI", "宮田": "MIYATA",
	"大石": "OISHI", "本間": "HONMA", "須藤": "SUDO", "高山": "TAKAYAMA", "岡崎": "OKAZAKI", "小田": "ODA",
	"伊東": "ITO", "鎌田": "KAMATA", "上原": "UEHARA", "篠原": "SHINOHARA", "小西": "KONISHI", "松原": "MATSUBARA",
	"福井": "FUKUI", "古田": "FURUTA", "大森": "OMORI", "小泉": "KOIZUMI", "成田": "NARITA", "奥村": "OKUMURA",
	"内山": "UCHIYAMA", "沢田": "SAWADA", "川田": "KAWADA", "篠田": "SHINODA", "入江": "IRIE", "宮下": "MIYASHITA",
	"堀内": "HORIUCHI", "堀田": "HOTTA", "安倍": "ABE", "菅": "SUGA", "岸田": "KISHIDA", "麻生": "ASO",
	// given names
	"太郎": "TARO", "次郎": "JIRO", "一郎": "ICHIRO", "三郎": "SABURO", "四郎": "SHIRO", "健一": "KENICHI",
	"健二": "KENJI", "健太": "KENTA", "健": "KEN", "清": "KIYOSHI", "清司": "KIYOSHI", "誠": "MAKOTO",
	"博": "HIROSHI", "浩": "HIROSHI", "弘": "HIROSHI", "茂": "SHIGERU", "隆": "TAKASHI", "孝": "TAKASHI",
	"勉": "TSUTOMU", "明": "AKIRA", "進": "SUSUMU", "実": "MINORU", "稔": "MINORU", "修": "OSAMU", "豊": "YUTAKA",
	"武": "TAKESHI", "学": "MANABU", "剛": "TSUYOSHI", "正": "TADASHI", "聡": "SATOSHI", "徹": "TORU", "功": "ISAO",
	"昇": "NOBORU", "勝": "MASARU", "亮": "RYO", "忍": "SHINOBU", "翔太": "SHOTA", "大輔": "DAISUKE", "拓也": "TAKUYA",
	"直樹": "NAOKI", "和也": "KAZUYA", "達也": "TATSUYA", "哲也": "TETSUYA", "和夫": "KAZUO", "信夫": "NOBUO",
	"義男": "YOSHIO", "康夫": "YASUO", "敏夫": "TOSHIO", "邦雄": "KUNIO", "秀樹": "HIDEKI", "英樹": "HIDEKI",
	"正樹": "MASAKI", "雅人": "MASATO", "浩二": "KOJI", "賢治": "KENJI", "誠一": "SEIICHI", "晋三": "SHINZO",
	"裕子": "YUKO", "優子": "YUKO", "恵子": "KEIKO", "洋子": "YOKO", "陽子": "YOKO", "幸子": "SACHIKO",
	"和子": "KAZUKO", "美智子": "MICHIKO", "久美子": "KUMIKO", "由美子": "YUMIKO", "真由美": "MAYUMI",
	"明美": "AKEMI", "智子": "TOMOKO", "京子": "KYOKO", "直子": "NAOKO", "花子": "HANAKO", "愛": "AI",
	"忠政": "TADAMASA", "彰晃": "SHOKO", "建市": "KENICHI", "司": "TSUKASA",
}

// japaneseKanji are single kanji in their usual reading in names.
var japaneseKanji = map[rune]string{
	'山': "YAMA", '田': "TA", '中': "NAKA", '村': "MURA", '本': "MOTO", '川': "KAWA", '木': "KI", '林': "HAYASHI",
	'森': "MORI", '藤': "FUJI", '佐': "SA", '伊': "I", '加': "KA", '高': "TAKA", '小': "KO", '大': "O",
	'松': "MATSU", '井': "I", '上': "UE", '下': "SHITA", '石': "ISHI", '原': "HARA", '野': "NO", '谷': "TANI",
	'島': "SHIMA", '崎': "SAKI", '岡': "OKA", '吉': "YOSHI", '清': "KIYO", '水': "MIZU", '池': "IKE", '橋': "HASHI",
	'前': "MAE", '後': "GO", '近': "KON", '斎': "SAI", '遠': "EN", '工': "KU", '安': "YASU", '武': "TAKE",
	'長': "NAGA", '内': "UCHI", '堀': "HORI", '入': "IRI", '江': "E", '篠': "SHINO", '西': "NISHI", '東': "HIGASHI",
	'北': "KITA", '南': "MINAMI", '宮': "MIYA", '桜': "SAKURA", '千': "CHI", '葉': "HA", '福': "FUKU", '坂': "SAKA",
	'浜': "HAMA", '平': "HIRA", '和': "KAZU", '久': "HISA", '保': "YASU", '永': "NAGA", '菊': "KIKU", '竹': "TAKE",
	'杉': "SUGI", '横': "YOKO", '月': "TSUKI", '市': "ICHI", '今': "IMA", '新': "NII", '古': "FURU", '沢': "SAWA",
	'渡': "WATA", '辺': "NABE", '部': "BE", '阿': "A", '青': "AO", '赤': "AKA", '黒': "KURO", '白': "SHIRO",
	'金': "KANE", '浅': "ASA", '麻': "ASA", '秋': "AKI", '春': "HARU", '夏': "NATSU", '冬': "FUYU", '星': "HOSHI",
	'丸': "MARU", '関': "SEKI", '辻': "TSUJI", '岩': "IWA", '浦': "URA", '尾': "O", '口': "GUCHI", '屋': "YA",
	'瀬': "SE", '間': "MA", '場': "BA", '畑': "HATA", '泉': "IZUMI", '津': "TSU", '神': "KAMI", '寺': "TERA",
	'一': "ICHI", '二': "JI", '三': "ZO", '四': "SHI", '五': "GO", '郎': "RO", '次': "JI", '太': "TA", '健': "KEN",
	'建': "KEN", '司': "JI", '夫': "O", '雄': "O", '男': "O", '正': "MASA", '政': "MASA", '忠': "TADA",
	'禎': "TADASHI", '邦': "KUNI", '彰': "SHO", '晃': "KO", '博': "HIRO", '弘': "HIRO", '浩': "HIRO", '裕': "HIRO",
	'宏': "HIRO", '明': "AKI", '昭': "AKI", '秀': "HIDE", '英': "HIDE", '俊': "TOSHI", '敏': "TOSHI", '隆': "TAKA",
	'孝': "TAKA", '貴': "TAKA", '義': "YOSHI", '良': "YOSHI", '芳': "YOSHI", '美': "MI", '子': "KO", '恵': "KEI",
	'智': "TOMO", '友': "TOMO", '直': "NAO", '真': "MA", '誠': "MAKOTO", '勇': "ISAMU", '茂': "SHIGE", '重': "SHIGE",
	'信': "NOBU", '伸': "NOBU", '幸': "YUKI", '勝': "KATSU", '克': "KATSU", '光': "MITSU", '満': "MITSU", '哲': "TETSU",
	'治': "HARU", '輔': "SUKE", '介': "SUKE", '助': "SUKE", '也': "YA", '哉': "YA", '彦': "HIKO", '人': "TO",
	'斗': "TO", '樹': "KI", '輝': "TERU", '照': "TERU", '花': "HANA", '奈': "NA", '香': "KA", '由': "YU",
	'優': "YU", '陽': "HARU", '悠': "YU", '拓': "TAKU", '亮': "RYO", '龍': "RYU", '竜': "RYU", '昌': "MASA",
	'雅': "MASA", '成': "NARI", '紀': "NORI", '典': "NORI", '則': "NORI", '康': "YASU", '泰': "YASU", '靖': "YASU",
	'達': "TATSU", '賢': "KEN", '晋': "SHIN", '京': "KYO", '洋': "HIRO", '勉': "TSUTOMU", '徹': "TORU", '聡': "SATOSHI",
	'剛': "TSUYOSHI", '稔': "MINORU", '実': "MINORU", '豊': "YUTAKA", '修': "OSAMU", '進': "SUSUMU", '学': "MANABU",
	'翔': "SHO", '涼': "RYO", '蓮': "REN", '結': "YUI", '愛': "AI", '菅': "SUGA", '岸': "KISHI", '生': "O",
	'倍': "BE", '鈴': "SUZU", '渋': "SHIBU", '柴': "SHIBA", '荒': "ARA", '須': "SU", '飯': "II", '土': "TSUCHI",
	'栗': "KURI", '萩': "HAGI", '片': "KATA", '鎌': "KAMA", '奥': "OKU", '熊': "KUMA", '望': "MOCHI", '矢': "YA",
	'馬': "BA", '樋': "HI", '増': "MASU", '塚': "TSUKA", '嵐': "ARASHI", '服': "HATTO", '国': "KUNI", '宗': "MUNE",
}

// japaneseReading reads the kanji of name in Japanese (see the tables
// above), the kana as kanaReading does, and leaves the rest. ok is false
// when the name has a kanji the tables do not read.
func japaneseReading(name string) (string, bool) {
	rs := []rune(name)
	var b strings.Builder
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case unicode.Is(unicode.Han, r):
			matched := false
			for n := min(3, len(rs)-i); n >= 2; n-- {
				if t, ok := japaneseNames[string(rs[i:i+n])]; ok {
					b.WriteString(" " + t + " ")
					i += n
					matched = true
					break
				}
			}
			if matched {
				continue
			}
			// A one-kanji name (清 KIYOSHI) is read whole only at the end
			// of a run of kanji; inside one the kanji is part of a longer
			// name (清田 KIYOTA).
			t, ok := "", false
			if i+1 == len(rs) || !unicode.Is(unicode.Han, rs[i+1]) && rs[i+1] != '々' {
				t, ok = japaneseNames[string(r)]
			}
			if !ok {
				t, ok = japaneseKanji[r]
			}
			if !ok || t == "" {
				return "", false
			}
			b.WriteString(" " + t + " ")
			i++
		case r == '々' && i > 0 && unicode.Is(unicode.Han, rs[i-1]) && rs[i-1] != '々':
			// the repetition mark doubles the kanji before it
			rs[i] = rs[i-1]
		case isWordSeparator(r):
			b.WriteByte(' ')
			i++
		case isKana(r):
			b.WriteString(kanaReading(r))
			i++
		default:
			b.WriteRune(r)
			i++
		}
	}
	return b.String(), true
}
